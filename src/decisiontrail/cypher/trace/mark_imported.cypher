// A trace imported: when, into how many plans and decisions; its kept spans are no longer needed.
UNWIND $traces AS imported
MATCH (t:Trace {trace_id: imported.trace_id})
SET t.imported_at = $at, t.plans = imported.plans, t.decisions = imported.decisions
WITH t
MATCH (span:Span {trace_id: t.trace_id})
DETACH DELETE span
