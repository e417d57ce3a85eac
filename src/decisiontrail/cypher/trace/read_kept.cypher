// The spans kept of the given traces (until their root arrives), each trace's in one row.
UNWIND $trace_ids AS trace_id
MATCH (span:Span {trace_id: trace_id})
RETURN trace_id, collect(span.body) AS bodies
ORDER BY trace_id
