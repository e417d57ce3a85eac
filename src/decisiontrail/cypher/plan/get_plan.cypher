MATCH (plan:Plan {plan_id: $plan_id})
RETURN plan {.*} AS plan,
  [(plan)-[:CHILD_OF]->(parent:Plan) | parent.plan_id][0] AS parent_plan_id,
  [(spawning:Decision)-[:SPAWNED]->(plan) | spawning.decision_id][0] AS spawned_by_decision_id
