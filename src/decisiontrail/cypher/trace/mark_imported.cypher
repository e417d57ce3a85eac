// A trace imported: when, into which plans and how many decisions; its kept spans are no longer needed.
// Each plan names its trace, so the marker goes with the last of them (retention/delete_plans).
UNWIND $traces AS imported
MATCH (t:Trace {trace_id: imported.trace_id})
SET t.imported_at = $at, t.plans = size(imported.plan_ids), t.plan_ids = imported.plan_ids,
  t.decisions = imported.decisions
WITH t, imported
CALL (t, imported) {
  UNWIND imported.plan_ids AS plan_id
  MATCH (plan:Plan {plan_id: plan_id})
  SET plan.trace_id = t.trace_id
}
CALL (t) {
  MATCH (span:Span {trace_id: t.trace_id})
  DETACH DELETE span
}
