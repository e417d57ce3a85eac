// Supersedes the original and its whole downstream by the correction, invalidates the plans
// spawned inside it, and keeps the attempt. Superseded decisions (and the reviews they were
// resolved from) give up their idempotency key, so a replay may record the same step anew.
MATCH (correction:Decision {decision_id: $correction_id})
MATCH (original:Decision {decision_id: $original_id})
CREATE (attempt:CorrectionAttempt $attempt)
CREATE (attempt)-[:ATTEMPT_ON]->(original)
CREATE (attempt)-[:PRODUCED]->(correction)
WITH correction, attempt
CALL (correction) {
  UNWIND $superseded_ids AS id
  MATCH (x:Decision {decision_id: id})
  WHERE x.superseded_at IS NULL
  CREATE (x)-[:SUPERSEDED_BY {at: $at}]->(correction)
  SET x.superseded_at = $at, x.retired_idempotency_key = x.idempotency_key
  REMOVE x.idempotency_key
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
RETURN superseded, invalidated
