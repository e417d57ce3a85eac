// The correction attempts made in a plan (with $hierarchy, in it and every plan below it) or in a
// project's plans, oldest first: what a dataset of corrections is built from. Visibility is applied
// here: with $owner or $scope_project set, only plans of that owner and project count, and of the
// decisions a replay recorded and the records an attempt invalidated only those in such plans.
CALL () {
  MATCH (top:Plan {plan_id: $plan_id})
  MATCH (plan:Plan)-[:CHILD_OF]->{0,}(top)
  WHERE $hierarchy OR plan = top
  RETURN plan
  UNION
  MATCH (plan:Plan {project: $project})
  RETURN plan
}
WITH plan
WHERE ($owner IS NULL OR plan.owner = $owner) AND ($scope_project IS NULL OR plan.project = $scope_project)
MATCH (plan)<-[:IN_PLAN]-(corrected:Decision)<-[:ATTEMPT_ON]-(attempt:CorrectionAttempt)
WITH plan, corrected, attempt, $owner IS NULL AND $scope_project IS NULL AS unlimited
RETURN attempt {.*} AS attempt, plan.plan_id AS plan_id, plan.project AS project,
  [(replacement:Decision)-[:REPLACES]->(corrected) | replacement.decision_id][0] AS replacement_id,
  [id IN coalesce(attempt.replayed_decision_ids, []) WHERE unlimited OR EXISTS {
    MATCH (:Decision {decision_id: id})-[:IN_PLAN]->(seen:Plan)
    WHERE ($owner IS NULL OR seen.owner = $owner) AND ($scope_project IS NULL OR seen.project = $scope_project)
  }] AS replayed_ids,
  CASE WHEN unlimited THEN size(attempt.invalidated_decision_ids) ELSE size([id IN attempt.invalidated_decision_ids WHERE EXISTS {
    MATCH (:Decision {decision_id: id})-[:IN_PLAN]->(seen:Plan)
    WHERE ($owner IS NULL OR seen.owner = $owner) AND ($scope_project IS NULL OR seen.project = $scope_project)
  }]) END AS invalidated_decision_count,
  CASE WHEN unlimited THEN size(attempt.invalidated_plan_ids) ELSE size([id IN attempt.invalidated_plan_ids WHERE EXISTS {
    MATCH (seen:Plan {plan_id: id})
    WHERE ($owner IS NULL OR seen.owner = $owner) AND ($scope_project IS NULL OR seen.project = $scope_project)
  }]) END AS invalidated_plan_count
ORDER BY attempt.at, attempt.attempt_id
