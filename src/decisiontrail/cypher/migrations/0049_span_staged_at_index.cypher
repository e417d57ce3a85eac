// A prune finds the spans that have waited longer than the trace wait for their root by when they
// were kept (retention/find_expired_traces), not by reading every waiting span.
CREATE INDEX span_staged_at IF NOT EXISTS
FOR (s:Span) ON (s.staged_at)
