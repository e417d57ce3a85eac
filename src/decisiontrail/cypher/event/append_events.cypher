// The last statement of a write that publishes events: the counter's lock is held until the commit,
// so sequence numbers follow commit order and a reader never sees a later number before an earlier one.
MERGE (counter:EventCounter {name: 'events'})
  ON CREATE SET counter.seq = 0, counter.pruned_through = 0
SET counter.seq = counter.seq + size($events)
WITH counter.seq - size($events) AS base
UNWIND range(0, size($events) - 1) AS i
WITH base, i, $events[i] AS event
CREATE (:Event {
  seq: base + i + 1, kind: event.kind, plan_id: event.plan_id, decision_id: event.decision_id,
  review_id: event.review_id, at: $at
})
