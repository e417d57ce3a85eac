// How many runs of the plan and the plans below it are queued or running.
MATCH (plan:Plan {plan_id: $plan_id})
MATCH (plan)<-[:CHILD_OF*0..]-(below:Plan)<-[:RUNS]-(run:PlanRun)
WHERE run.status IN ['queued', 'running']
RETURN count(run) AS active
