// The events a write announces ($announce: graphdb.outbox.Announcement), stored unnumbered
// (:PendingEvent) and numbered after the commit (graphdb.outbox.number), so a write takes no lock
// but its plans': numbered here, under the counter's lock held until the commit, every write
// queued behind every other's commit. What numbering orders them by is stamped here: each plan's
// announcing writes are counted on its :Plan (`announced`; the write holds its plans' locks
// already, so in the order its writes committed), and a plan's events are numbered in that order.
// Not on the :PlanLock: a holder incrementing a count of that node a second time makes every
// writer queued on it a deadlock victim (see decision/read_placements). Across plans by `stamp`, the time Neo4j read
// once every plan's lock was held (a write that saw another's commit reads a later time), then by
// the write, then by the run's place in it. A write's last statement carries them: this one on its own, or this subquery, verbatim,
// at the end of the statement (decision/create_decisions, correction/supersede_downstream),
// saving a round trip. A run's events are numbered seq to last_seq (graphdb.outbox.packed). No
// announcement ($announce null): nothing.
CALL () {
  UNWIND CASE WHEN $announce IS NULL THEN [] ELSE [$announce] END AS announce
  CALL (announce) {
    UNWIND announce.runs AS run
    WITH DISTINCT run.plan_id AS plan_id ORDER BY plan_id
    MATCH (counted:Plan {plan_id: plan_id})
    SET counted.announced = coalesce(counted.announced, 0) + 1
    RETURN collect({plan_id: plan_id, write: counted.announced}) AS writes
  }
  WITH announce, writes, datetime.realtime() AS stamp, randomUUID() AS write
  UNWIND announce.runs AS run
  CREATE (:PendingEvent {
    stamp: stamp, write: write, offset: run.offset, size: run.size,
    plan_write: [w IN writes WHERE w.plan_id = run.plan_id][0].write,
    kind: run.kind, plan_id: run.plan_id, decision_ids: run.decision_ids, review_ids: run.review_ids, at: announce.at
  })
}
