// Every correction attempt, kept or not, with what it corrected and produced where those remain.
MATCH (a:CorrectionAttempt)
RETURN
  a {.*, replay_frontier: null} AS attempt,
  [(a)-[:ATTEMPT_ON]->(d:Decision) | d.decision_id] AS attempt_on_ids,
  [(a)-[:PRODUCED]->(d:Decision) | d.decision_id] AS produced_ids
