// A plan's current root and its parent candidates are found by plan and type together: without
// this index every recording scanned its plan's decisions, growing with the plan.
CREATE INDEX decision_plan_type IF NOT EXISTS
FOR (d:Decision) ON (d.plan_id, d.decision_type)
