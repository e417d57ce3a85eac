// A plan's runs (queue_replay, runs_of_plans) are found by its id.
CREATE INDEX plan_run_plan_index IF NOT EXISTS FOR (run:PlanRun) ON (run.plan_id)
