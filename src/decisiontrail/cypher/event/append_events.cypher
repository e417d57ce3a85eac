// The events a write announces ($announce: graphdb.outbox.Announcement), numbered under the counter's
// lock, which is held until the commit, so sequence numbers follow commit order and a reader never
// sees a later number before an earlier one. A write's last statement carries them: this one on its
// own, or this subquery, verbatim, at the end of the statement (decision/create_decisions,
// correction/supersede_downstream), saving a round trip. A run's events are numbered seq to
// last_seq (graphdb.outbox.packed). No announcement ($announce null): nothing, and no lock taken.
CALL () {
  UNWIND CASE WHEN $announce IS NULL THEN [] ELSE [$announce] END AS announce
  MERGE (counter:EventCounter {name: 'events'})
    ON CREATE SET counter.seq = 0, counter.pruned_through = 0
  SET counter.seq = counter.seq + announce.count
  WITH announce, counter.seq - announce.count AS base
  UNWIND announce.runs AS run
  CREATE (:Event {
    seq: base + run.offset + 1, last_seq: base + run.offset + run.size, kind: run.kind, plan_id: run.plan_id,
    decision_ids: run.decision_ids, review_ids: run.review_ids, at: announce.at
  })
}
