// Extends the lease of the runs $worker still holds; returns the ids it holds no more.
UNWIND $run_ids AS run_id
MATCH (run:PlanRun {run_id: run_id})
SET run._locked = true  // locked before it is judged, as in finish_run
REMOVE run._locked
WITH run, run.status = 'running' AND run.claimed_by = $worker AS held
SET run.lease_until = CASE WHEN held THEN $lease_until ELSE run.lease_until END
WITH run, held WHERE NOT held
RETURN run.run_id AS lost
