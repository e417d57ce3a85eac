// Queues again the waiting runs of these plans (a review resolved, a child run finished); a run a
// worker holds is marked woken, so that the worker queues it again instead of leaving it waiting.
UNWIND $plan_ids AS plan_id
MATCH (run:PlanRun {plan_id: plan_id})
SET run._locked = true  // locked before it is judged, as in finish_run
REMOVE run._locked
WITH run
WHERE run.status IN ['waiting', 'running']
SET run.woken = run.status = 'running',
    run.status = CASE WHEN run.status = 'waiting' THEN 'queued' ELSE run.status END,
    run.updated_at = $now
RETURN run.run_id AS run_id
