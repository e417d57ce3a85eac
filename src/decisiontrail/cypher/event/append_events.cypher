// The last statement of a write that publishes events: the counter's lock is held until the commit,
// so sequence numbers follow commit order and a reader never sees a later number before an earlier one.
// $count events in $runs (graphdb.outbox.packed): a run's events are numbered seq to last_seq.
MERGE (counter:EventCounter {name: 'events'})
  ON CREATE SET counter.seq = 0, counter.pruned_through = 0
SET counter.seq = counter.seq + $count
WITH counter.seq - $count AS base
UNWIND $runs AS run
CREATE (:Event {
  seq: base + run.offset + 1, last_seq: base + run.offset + run.size, kind: run.kind, plan_id: run.plan_id,
  decision_ids: run.decision_ids, review_ids: run.review_ids, at: $at
})
