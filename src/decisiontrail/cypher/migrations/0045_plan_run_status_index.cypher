// Workers claim runs by their status (claim_run).
CREATE INDEX plan_run_status_index IF NOT EXISTS FOR (run:PlanRun) ON (run.status)
