// A batch of placed decisions, each with its plan membership, captured context, Execute
// checkpoint group, parent, dependencies, the decision it corrects and the review it resolves
// (which may be decisions of the same batch), and the plans' counters moved past the sequence
// numbers the batch took (decision/_create_placed_decisions), and the events announcing them
// ($announce, or null). One round trip, whatever the batch's size.
// include: decision/_create_placed_decisions
// The events the write announces, if it carries them (event/append_events, verbatim).
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
RETURN size(created) AS created
