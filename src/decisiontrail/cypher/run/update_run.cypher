// Sets what a worker learned about the run it holds (its actor, its generation, the replay it
// took up); nothing when the claim is no longer its own (the run was cancelled or claimed again).
MATCH (run:PlanRun {run_id: $run_id})
SET run._locked = true  // locked before it is judged, as in finish_run
REMOVE run._locked
WITH run
WHERE run.status = 'running' AND run.claimed_by = $worker AND run.attempts = $attempts
SET run += $changes, run.updated_at = $now
RETURN run
