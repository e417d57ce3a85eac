// Keep each span of a trace not yet imported until its root span arrives; a span sent again is kept once.
// When it was first kept is what a prune's trace wait counts from (retention/find_expired_traces).
UNWIND $spans AS s
MERGE (span:Span {key: s.key})
  ON CREATE SET span.trace_id = s.trace_id, span.span_id = s.span_id, span.is_root = s.is_root, span.body = s.body,
    span.staged_at = $at
