UNWIND $plan_ids AS plan_id
MATCH (plan:Plan {plan_id: plan_id})
RETURN plan {.*} AS plan,
  [(plan)-[:CHILD_OF]->(parent:Plan) | parent.plan_id][0] AS parent_plan_id,
  [(plan)-[:SPAWNED_BY]->(spawning:Decision) | spawning.decision_id][0] AS spawned_by_decision_id
