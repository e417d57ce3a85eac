// The traces a prune expires as of $cutoff: still waiting for their root span, nothing of them
// received since the cutoff, each with how many spans it kept. A span kept before the cutoff finds
// its trace (an index seek, hinted: the planner would read every waiting span on a young database).
MATCH (old:Span)
USING INDEX old:Span(staged_at)
WHERE old.staged_at < $cutoff
WITH DISTINCT old.trace_id AS trace_id
MATCH (t:Trace {trace_id: trace_id})
WHERE t.imported_at IS NULL AND t.last_received_at < $cutoff
RETURN trace_id, COUNT { MATCH (span:Span {trace_id: trace_id}) } AS spans
ORDER BY trace_id
