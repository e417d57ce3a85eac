// The child plans of spawning decisions inside a loaded scope that the scope left out (a parent
// plan loaded alone): their SPAWNED_BY points into the scope, so no far end of an edge leaving it
// brings them. The same columns as plan_rows but the size; the loader adds them as plan_rows'
// plans, marked boundary, so a plan loaded alone and its hierarchy agree on a spawn's children.
UNWIND $decision_ids AS decision_id
MATCH (p:Plan)-[:SPAWNED_BY]->(:Decision {decision_id: decision_id})
WITH DISTINCT p
// Times as ISO text (toString): Python parses it in C, where hydrating the driver's DateTime was most of a load.
RETURN
  p {.*, next_sequence: null, announced: null, created_at: toString(p.created_at), invalidated_at: toString(p.invalidated_at)} AS plan,
  [(p)-[:CHILD_OF]->(parent:Plan) | parent.plan_id] AS parent_plan_ids,
  [(p)-[:SPAWNED_BY]->(spawning:Decision) | spawning.decision_id] AS spawned_by_ids,
  [(p)-[invalidated:INVALIDATED_BY]->(attempt:CorrectionAttempt) | attempt.attempt_id] AS invalidated_by_ids
ORDER BY p.created_at, p.plan_id
