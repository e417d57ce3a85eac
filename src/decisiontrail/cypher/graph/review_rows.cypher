// The reviews held for the plans, and the decision each resolved as.
UNWIND $plan_ids AS plan_id
MATCH (:Plan {plan_id: plan_id})<-[:FOR_PLAN]-(r:Review)
// Times as ISO text (toString): Python parses it in C, where hydrating the driver's DateTime was most of a load.
RETURN
  r {.*, proposal: null, idempotency_key: null, created_at: toString(r.created_at), resolved_at: toString(r.resolved_at)} AS review,
  plan_id,
  [(r)-[:RESOLVED_AS]->(d:Decision) | d.decision_id] AS resolved_as_ids
