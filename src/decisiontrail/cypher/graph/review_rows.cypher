// The reviews held for the plans, and the decision each resolved as.
UNWIND $plan_ids AS plan_id
MATCH (:Plan {plan_id: plan_id})<-[:FOR_PLAN]-(r:Review)
RETURN
  r {.*, proposal: null, idempotency_key: null} AS review,
  plan_id,
  [(r)-[:RESOLVED_AS]->(d:Decision) | d.decision_id] AS resolved_as_ids
