// The newest run of each plan that has one.
UNWIND $plan_ids AS plan_id
MATCH (run:PlanRun {plan_id: plan_id})
WITH plan_id, run ORDER BY run.created_at DESC
WITH plan_id, collect(run)[0] AS run
RETURN run
