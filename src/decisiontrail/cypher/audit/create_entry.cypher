// One write's audit entry, in the write's own transaction: linked by AUDITS to every plan it names
// and to the plans of the decisions it names, so retention deleting a plan deletes its entries.
CREATE (entry:AuditEntry {
  entry_id: $entry_id, at: $at, principal: $principal, role: $role, principal_project: $principal_project,
  operation: $operation, request_id: $request_id, decision_ids: $decision_ids, review_ids: $review_ids,
  other_ids: $other_ids
})
WITH entry
CALL (entry) {
  OPTIONAL MATCH (decision:Decision) WHERE decision.decision_id IN $decision_ids
  WITH collect(DISTINCT decision.plan_id) + $plan_ids AS wanted
  UNWIND wanted AS plan_id
  MATCH (plan:Plan {plan_id: plan_id})
  WITH DISTINCT plan
  CREATE (entry)-[:AUDITS]->(plan)
  RETURN collect(plan.plan_id) AS plan_ids, collect(DISTINCT plan.project) AS projects
}
SET entry.plan_ids = plan_ids, entry.projects = projects
