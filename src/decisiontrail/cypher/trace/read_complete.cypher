// Of the given traces, those whose root span has arrived, with every span kept for them.
UNWIND $trace_ids AS trace_id
MATCH (t:Trace {trace_id: trace_id})
WHERE t.imported_at IS NULL
  AND EXISTS { MATCH (:Span {trace_id: trace_id, is_root: true}) }
MATCH (span:Span {trace_id: trace_id})
RETURN trace_id, collect(span.body) AS bodies
ORDER BY trace_id
