// Plans with the plan they are a child of, the decision that spawned them, and their size.
UNWIND $plan_ids AS plan_id
MATCH (p:Plan {plan_id: plan_id})
// Times as ISO text (toString): Python parses it in C, where hydrating the driver's DateTime was most of a load.
RETURN
  p {.*, next_sequence: null, announced: null, created_at: toString(p.created_at), invalidated_at: toString(p.invalidated_at)} AS plan,
  [(p)-[:CHILD_OF]->(parent:Plan) | parent.plan_id] AS parent_plan_ids,
  [(p)-[:SPAWNED_BY]->(spawning:Decision) | spawning.decision_id] AS spawned_by_ids,
  [(p)-[invalidated:INVALIDATED_BY]->(attempt:CorrectionAttempt) | attempt.attempt_id] AS invalidated_by_ids,
  // How many decisions it holds (a degree: no decision is read), so the loader knows how many a
  // statement of decision_rows would collect.
  COUNT { (p)<-[:IN_PLAN]-() } AS decisions
