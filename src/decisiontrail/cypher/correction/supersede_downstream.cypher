// Supersedes the original and its whole downstream by the correction, invalidates the plans
// spawned inside it, cancels the reviews it made moot (naming it), keeps the attempt, and moves
// the corrected plan to its phase (a PhaseChange recorded only when the phase changes). The
// attempt keeps the superseded ids ($superseded_ids, not sent twice in $attempt).
// Superseded decisions, the reviews they were resolved from and the cancelled reviews give up
// their idempotency key, so a replay that reaches the same step records anew.
MATCH (correction:Decision {decision_id: $correction_id})
MATCH (original:Decision {decision_id: $original_id})
CREATE (attempt:CorrectionAttempt $attempt)
SET attempt.invalidated_decision_ids = $superseded_ids
CREATE (attempt)-[:ATTEMPT_ON]->(original)
CREATE (attempt)-[:PRODUCED]->(correction)
WITH correction, attempt
CALL (correction) {
  UNWIND $superseded_ids AS id
  MATCH (x:Decision {decision_id: id})
  WHERE x.superseded_at IS NULL
  CREATE (x)-[:SUPERSEDED_BY {at: $at}]->(correction)
  SET x.superseded_at = $at
  // Only a decision that has a key retires it: setting and removing absent properties cost a
  // third of this statement at 10,000 decisions, most of which were recorded without a key.
  FOREACH (key IN CASE WHEN x.idempotency_key IS NULL THEN [] ELSE [x.idempotency_key] END |
    SET x.retired_idempotency_key = key
    REMOVE x.idempotency_key)
  WITH x
  // The review a superseded decision was resolved from gives up the same key.
  OPTIONAL MATCH (review:Review)-[:RESOLVED_AS]->(x)
  SET review.retired_idempotency_key = review.idempotency_key
  REMOVE review.idempotency_key
  RETURN count(DISTINCT x) AS superseded
}
CALL (attempt) {
  UNWIND $plan_ids AS plan_id
  MATCH (plan:Plan {plan_id: plan_id})
  SET plan.invalidated_at = $at
  CREATE (plan)-[:INVALIDATED_BY]->(attempt)
  RETURN count(plan) AS invalidated
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
RETURN superseded, invalidated, cancelled, moved
