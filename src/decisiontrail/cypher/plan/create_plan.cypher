CREATE (plan:Plan $props)
SET plan.next_sequence = 0
WITH plan
CALL (plan) {
  MATCH (parent:Plan {plan_id: $parent_plan_id})
  CREATE (plan)-[:CHILD_OF]->(parent)
}
CALL (plan) {
  MATCH (spawning:Decision {decision_id: $spawned_by_decision_id})
  CREATE (plan)-[:SPAWNED_BY]->(spawning)
}
RETURN plan.plan_id AS plan_id
