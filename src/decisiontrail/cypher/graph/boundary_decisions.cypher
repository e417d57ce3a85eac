// Decisions outside a loaded scope that decisions or plans inside it point at.
UNWIND $decision_ids AS decision_id
MATCH (d:Decision {decision_id: decision_id})
// Times as ISO text (toString): Python parses it in C, where hydrating the driver's DateTime was most of a load.
RETURN d {.*, idempotency_key: null, created_at: toString(d.created_at), superseded_at: toString(d.superseded_at)} AS decision
