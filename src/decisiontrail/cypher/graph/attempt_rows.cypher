// The correction attempts on the plans' decisions, and what they corrected and produced.
UNWIND $plan_ids AS plan_id
MATCH (:Plan {plan_id: plan_id})<-[:IN_PLAN]-(:Decision)<-[:ATTEMPT_ON|PRODUCED]-(a:CorrectionAttempt)
WITH DISTINCT a
// Times as ISO text (toString): Python parses it in C, where hydrating the driver's DateTime was most of a load.
RETURN
  a {.*, replay_frontier: null, at: toString(a.at), replayed_at: toString(a.replayed_at)} AS attempt,
  [(a)-[:ATTEMPT_ON]->(d:Decision) | d.decision_id] AS attempt_on_ids,
  [(a)-[:PRODUCED]->(d:Decision) | d.decision_id] AS produced_ids
