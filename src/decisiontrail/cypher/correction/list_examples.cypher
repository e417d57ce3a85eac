// The correction attempts made in a plan (with $hierarchy, in it and every plan below it) or in
// $of_project's plans, oldest first: what a dataset of corrections is built from. Visibility
// (access/_sees_plan) is applied here: only the plans the caller sees count, and of the decisions a
// replay recorded and the records an attempt invalidated only those in such plans.
CALL () {
  MATCH (top:Plan {plan_id: $plan_id})
  MATCH (plan:Plan)-[:CHILD_OF]->{0,}(top)
  WHERE $hierarchy OR plan = top
  RETURN plan
  UNION
  MATCH (plan:Plan {project: $of_project})
  RETURN plan
}
WITH plan
WHERE
  // include: access/_sees_plan
MATCH (plan)<-[:IN_PLAN]-(corrected:Decision)<-[:ATTEMPT_ON]-(attempt:CorrectionAttempt)
WITH plan.plan_id AS plan_id, plan.project AS project, corrected, attempt, $owner IS NULL AND $project IS NULL AS unlimited
// For a caller some plans are hidden from: which of the decisions the attempt names lie in plans it
// sees, and how many of the plans it invalidated it sees (an aggregate: one row, if only of none).
CALL (attempt, unlimited) {
  WITH attempt WHERE NOT unlimited
  UNWIND coalesce(attempt.replayed_decision_ids, []) + attempt.invalidated_decision_ids AS id
  MATCH (:Decision {decision_id: id})-[:IN_PLAN]->(plan:Plan)
  WHERE
    // include: access/_sees_plan
  RETURN collect(DISTINCT id) AS seen_decisions
}
CALL (attempt, unlimited) {
  WITH attempt WHERE NOT unlimited
  UNWIND attempt.invalidated_plan_ids AS id
  MATCH (plan:Plan {plan_id: id})
  WHERE
    // include: access/_sees_plan
  RETURN count(plan) AS seen_plans
}
RETURN attempt {.*} AS attempt, plan_id, project,
  [(replacement:Decision)-[:REPLACES]->(corrected) | replacement.decision_id][0] AS replacement_id,
  [id IN coalesce(attempt.replayed_decision_ids, []) WHERE unlimited OR id IN seen_decisions] AS replayed_ids,
  CASE WHEN unlimited THEN size(attempt.invalidated_decision_ids)
       ELSE size([id IN attempt.invalidated_decision_ids WHERE id IN seen_decisions]) END AS invalidated_decision_count,
  CASE WHEN unlimited THEN size(attempt.invalidated_plan_ids) ELSE seen_plans END AS invalidated_plan_count
ORDER BY attempt.at, attempt.attempt_id
