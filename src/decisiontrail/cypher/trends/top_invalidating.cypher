// The decisions whose corrections invalidated most: per decision a correction was made of, in the
// plans the caller sees (access/_sees_plan), by the corrections made at or after $since and before
// $until, how many decisions and plans those corrections invalidated (the corrected decision counts
// itself, as correctDecision's `invalidated` does), counting only those in plans the caller sees
// (a dependent in a hidden plan is neither shown nor counted); the $limit that invalidated most, then
// by decision id.
MATCH (plan:Plan)
WHERE
  // include: access/_sees_plan
MATCH (attempt:CorrectionAttempt)-[:ATTEMPT_ON]->(d:Decision)-[:IN_PLAN]->(plan)
WHERE ($since IS NULL OR attempt.at >= $since) AND ($until IS NULL OR attempt.at < $until)
WITH d, plan.plan_id AS plan_id, plan.description AS plan_description, attempt
CALL (attempt) {
  UNWIND coalesce(attempt.invalidated_decision_ids, []) AS gone_id
  MATCH (gone:Decision {decision_id: gone_id})-[:IN_PLAN]->(plan:Plan)
  WHERE
    // include: access/_sees_plan
  RETURN count(gone) AS decisions
}
CALL (attempt) {
  UNWIND coalesce(attempt.invalidated_plan_ids, []) AS gone_id
  MATCH (plan:Plan {plan_id: gone_id})
  WHERE
    // include: access/_sees_plan
  RETURN count(plan) AS plans
}
WITH d, plan_id, plan_description, count(attempt) AS corrections, sum(decisions) AS decisions, sum(plans) AS plans,
     max(attempt.at) AS last_at
ORDER BY decisions DESC, plans DESC, d.decision_id
LIMIT $limit
RETURN d.decision_id AS decision_id, plan_id, plan_description, d.sequence_number AS sequence_number,
       d.decision_type AS decision_type, d.question AS question, d.chosen_option AS chosen_option,
       corrections, decisions, plans, toString(last_at) AS last_at
