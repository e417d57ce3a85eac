// The replay a worker took up leaves the run's queue of replays.
MATCH (run:PlanRun {run_id: $run_id})
SET run._locked = true  // locked before its replays are read: a correction's replay queued meanwhile stays queued
REMOVE run._locked
WITH run
WHERE run.claimed_by = $worker AND run.attempts = $attempts
SET run.replays = [r IN coalesce(run.replays, []) WHERE r <> $attempt_id]
RETURN run
