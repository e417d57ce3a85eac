MATCH (plan:Plan {plan_id: $plan_id})
CREATE (d:Decision $props)-[:IN_PLAN]->(plan)
WITH d
CALL (d) {
  MATCH (parent:Decision {decision_id: $parent_decision_id})
  CREATE (d)-[:PARENT]->(parent)
}
CALL (d) {
  UNWIND range(0, size($depends_on) - 1) AS ordinal
  MATCH (dependency:Decision {decision_id: $depends_on[ordinal]})
  CREATE (d)-[:DEPENDS_ON {ordinal: ordinal}]->(dependency)
}
CALL (d) {
  MATCH (original:Decision {decision_id: $corrects_decision_id})
  CREATE (d)-[:CORRECTS]->(original)
}
RETURN d.decision_id AS decision_id
