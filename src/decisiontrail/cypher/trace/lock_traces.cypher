// Lock each trace of a request (in id order, so two requests never wait on each other in turn)
// and say which were imported already.
UNWIND $trace_ids AS trace_id
MERGE (t:Trace {trace_id: trace_id})
  ON CREATE SET t.received_at = $at
SET t.last_received_at = $at
RETURN t.trace_id AS trace_id, t.imported_at IS NOT NULL AS imported
ORDER BY trace_id
