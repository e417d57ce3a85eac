// A plan's run (the runtime's durable work), linked to the plan it runs; queued for a worker.
MATCH (plan:Plan {plan_id: $plan_id})
CREATE (run:PlanRun)-[:RUNS]->(plan)
SET run = $props
RETURN run
