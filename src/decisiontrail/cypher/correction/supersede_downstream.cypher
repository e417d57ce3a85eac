// Writes the correction decision as placed (where a statement of its own cost a round trip),
// then supersedes the original and its whole downstream by it, found by walking it here, under
// the locks the correction's reads took (the same walk as begin_correction's, so the same
// decisions and plans: the ids do not travel back from Python); the walk does not reach the
// correction (a new root, or hung beside the original, under its parent: CORRECTS is not
// walked). Invalidates the plans spawned
// inside it, cancels the reviews it made moot (naming it), keeps the attempt with the superseded
// ids (the original first, then by plan and sequence number, as the attempt lists them), and
// moves the corrected plan to its phase (a PhaseChange recorded only when the phase changes), and
// announces it all ($announce).
// Superseded decisions, the reviews they were resolved from and the cancelled reviews give up
// their idempotency key, so a replay that reaches the same step records anew.
// The walk is breadth-first with a visited set (see decision/lineage.cypher): keep the predicate
// over all nodes(path) and the DISTINCT collect. What it reached is counted back, so the caller
// can refuse (and roll back) a supersession that is not the downstream it judged.
// The correction decision, placed ($rows, $plans, $named_ids), written as any recorded decision is.
CALL () {
  // include: decision/_create_placed_decisions
  RETURN size(created) AS created
}
MATCH (correction:Decision {decision_id: $correction_id})
MATCH (original:Decision {decision_id: $original_id})
CALL (original) {
  OPTIONAL MATCH path = (original)<-[:PARENT|DEPENDS_ON|SPAWNED_BY|IN_PLAN*]-(reached)
  WHERE all(n IN nodes(path) WHERE n = original OR (n.superseded_at IS NULL AND n.invalidated_at IS NULL))
  WITH collect(DISTINCT reached) AS reached
  RETURN [x IN reached WHERE x:Decision] AS downstream, [x IN reached WHERE x:Plan] AS spawned
}
CREATE (attempt:CorrectionAttempt $attempt)
SET attempt.invalidated_decision_ids = [original.decision_id] + COLLECT {
  UNWIND downstream AS x
  WITH x ORDER BY x.plan_id, x.sequence_number
  RETURN x.decision_id
}
CREATE (attempt)-[:ATTEMPT_ON]->(original)
CREATE (attempt)-[:PRODUCED]->(correction)
WITH correction, attempt, original, [original] + downstream AS superseded, spawned
CALL (correction, superseded, original) {
  UNWIND superseded AS x
  CREATE (x)-[:SUPERSEDED_BY {at: $at}]->(correction)
  SET x.superseded_at = $at
  // Only a decision that has a key retires it: setting and removing absent properties cost a
  // third of this statement at 10,000 decisions, most of which were recorded without a key.
  FOREACH (key IN CASE WHEN x.idempotency_key IS NULL THEN [] ELSE [x.idempotency_key] END |
    SET x.retired_idempotency_key = key
    REMOVE x.idempotency_key)
  WITH x
  // The review a superseded decision was resolved from gives up the same key; and the approval
  // lapses, unless the decision is the one corrected (a person replaced it: the approval was not
  // built on anything that changed).
  OPTIONAL MATCH (review:Review)-[:RESOLVED_AS]->(x)
  SET review.retired_idempotency_key = review.idempotency_key
  REMOVE review.idempotency_key
  FOREACH (lapsed IN CASE WHEN review IS NULL OR x = original THEN [] ELSE [review] END |
    SET lapsed.lapsed_from = lapsed.status, lapsed.status = 'lapsed', lapsed.lapsed_by = $correction_id, lapsed.lapsed_at = $at)
  RETURN count(DISTINCT x) AS superseded_count,
    collect(CASE WHEN review IS NOT NULL AND x <> original THEN [review.review_id, review.plan_id] END) AS lapsed
}
CALL (attempt, spawned) {
  UNWIND spawned AS plan
  SET plan.invalidated_at = $at
  CREATE (plan)-[:INVALIDATED_BY]->(attempt)
  RETURN collect(plan.plan_id) AS invalidated_plan_ids
}
CALL (correction) {
  UNWIND $cancelled_review_ids AS review_id
  MATCH (review:Review {review_id: review_id})
  WHERE review.status = 'pending'
  SET review.status = 'cancelled', review.resolved_at = $at, review.cancelled_by = correction.decision_id,
      review.retired_idempotency_key = review.idempotency_key
  REMOVE review.idempotency_key
  RETURN count(review) AS cancelled
}
CALL () {
  MATCH (plan:Plan {plan_id: $plan_id})
  WHERE plan.phase <> $to_phase
  WITH plan, COUNT { (:PhaseChange)-[:OF_PLAN]->(plan) } AS earlier
  CREATE (:PhaseChange {from_phase: plan.phase, to_phase: $to_phase, reason: $phase_reason, at: $at, by: $by, number: earlier + 1})
    -[:OF_PLAN]->(plan)
  SET plan.phase = $to_phase
  RETURN count(plan) AS moved
}
// The correction's events (event/append_events, verbatim).
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
RETURN superseded_count, lapsed, invalidated_plan_ids, cancelled, moved
