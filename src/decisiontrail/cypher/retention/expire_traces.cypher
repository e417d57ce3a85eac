// Deletes one batch of the traces a prune expires, with the spans kept for them. Each trace is
// locked first (in id order, as an import locks them: trace/lock_traces) and judged again under
// the lock: a trace whose root arrived, or that received a span since $cutoff, while the prune ran
// stays. A span of an expired trace sent later is kept again, under a new marker, as a new trace's.
UNWIND $trace_ids AS trace_id
WITH trace_id
ORDER BY trace_id
MATCH (t:Trace {trace_id: trace_id})
SET t.expiring = true
WITH collect(t) AS locked
UNWIND locked AS t
WITH t, t.trace_id AS trace_id, t.imported_at IS NULL AND t.last_received_at < $cutoff AS expired
REMOVE t.expiring
WITH t, trace_id, expired
WHERE expired
CALL (trace_id) {
  MATCH (span:Span {trace_id: trace_id})
  DETACH DELETE span
  RETURN count(*) AS spans
}
DETACH DELETE t
RETURN collect(trace_id) AS expired_ids, sum(spans) AS expired_spans
