// Plans with the plan they are a child of and the decision that spawned them.
UNWIND $plan_ids AS plan_id
MATCH (p:Plan {plan_id: plan_id})
RETURN
  p {.*, next_sequence: null} AS plan,
  [(p)-[:CHILD_OF]->(parent:Plan) | parent.plan_id] AS parent_plan_ids,
  [(p)-[:SPAWNED_BY]->(spawning:Decision) | spawning.decision_id] AS spawned_by_ids,
  [(p)-[invalidated:INVALIDATED_BY]->(attempt:CorrectionAttempt) | attempt.attempt_id] AS invalidated_by_ids
