// Cancels a run that has not finished; a worker holding it stops at its next step.
MATCH (run:PlanRun {run_id: $run_id})
SET run._locked = true  // locked before it is judged, as in finish_run: a run that finished meanwhile stays finished
REMOVE run._locked
WITH run, run.status AS was
SET run.status = CASE WHEN was IN ['succeeded', 'failed', 'cancelled'] THEN was ELSE 'cancelled' END,
    run.error = CASE WHEN was IN ['succeeded', 'failed', 'cancelled'] THEN run.error ELSE $reason END,
    run.claimed_by = CASE WHEN was IN ['succeeded', 'failed', 'cancelled'] THEN run.claimed_by ELSE null END,
    run.lease_until = null,
    run.updated_at = CASE WHEN was IN ['succeeded', 'failed', 'cancelled'] THEN run.updated_at ELSE $now END
RETURN run, was
