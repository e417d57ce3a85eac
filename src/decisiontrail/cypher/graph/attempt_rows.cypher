// The correction attempts on the plans' decisions, and what they corrected and produced.
UNWIND $plan_ids AS plan_id
MATCH (:Plan {plan_id: plan_id})<-[:IN_PLAN]-(:Decision)<-[:ATTEMPT_ON|PRODUCED]-(a:CorrectionAttempt)
WITH DISTINCT a
RETURN
  a {.*, replay_frontier: null} AS attempt,
  [(a)-[:ATTEMPT_ON]->(d:Decision) | d.decision_id] AS attempt_on_ids,
  [(a)-[:PRODUCED]->(d:Decision) | d.decision_id] AS produced_ids
