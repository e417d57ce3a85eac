// The steps of a lineage walk among the nodes it reached (a limited caller's walk is redone
// through the plans it may see): each edge from one of them to another, and each node's plan
// with the plan's owner and project.
UNWIND $node_ids AS id
CALL (id) {
  OPTIONAL MATCH (d:Decision {decision_id: id})
  OPTIONAL MATCH (p:Plan {plan_id: id})
  RETURN coalesce(d, p) AS node
}
WITH node WHERE node IS NOT NULL
OPTIONAL MATCH (plan:Plan {plan_id: node.plan_id})
CALL (node) {
  OPTIONAL MATCH (node)-[:PARENT|DEPENDS_ON|IN_PLAN|SPAWNED_BY]->(next)
  WITH next WHERE next IS NOT NULL
  RETURN collect(coalesce(next.decision_id, next.plan_id)) AS next_ids
}
RETURN coalesce(node.decision_id, node.plan_id) AS id, plan.owner AS owner, plan.project AS project, next_ids
