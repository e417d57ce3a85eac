// The spans of one trace, read when its root span arrives.
CREATE INDEX span_trace IF NOT EXISTS
FOR (s:Span) ON (s.trace_id)
