// Decisions outside a loaded scope that decisions or plans inside it point at.
UNWIND $decision_ids AS decision_id
MATCH (d:Decision {decision_id: decision_id})
RETURN d {.*, idempotency_key: null} AS decision
