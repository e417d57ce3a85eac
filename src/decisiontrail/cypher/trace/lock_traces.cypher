// Lock each trace of a request (in id order, so two requests never wait on each other in turn);
// say which were imported already, and who sent each first.
UNWIND $trace_ids AS trace_id
MERGE (t:Trace {trace_id: trace_id})
  ON CREATE SET t.received_at = $at, t.sender = $sender
SET t.last_received_at = $at
RETURN t.trace_id AS trace_id, t.imported_at IS NOT NULL AS imported, t.sender AS sender
ORDER BY trace_id
