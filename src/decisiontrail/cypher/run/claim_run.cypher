// Claims the oldest run that is queued, or running under a lease that lapsed (its worker died),
// for $worker. The candidate is locked (the SET) before it is judged again: of two workers that
// found the same run, the second sees it claimed and takes nothing this round.
MATCH (candidate:PlanRun)
WHERE candidate.status = 'queued' OR (candidate.status = 'running' AND candidate.lease_until < $now)
WITH candidate ORDER BY candidate.updated_at, candidate.run_id LIMIT 1
SET candidate._claiming = true
REMOVE candidate._claiming
WITH candidate AS run
WHERE run.status = 'queued' OR (run.status = 'running' AND run.lease_until < $now)
SET run.status = 'running',
    run.claimed_by = $worker,
    run.lease_until = $lease_until,
    run.attempts = coalesce(run.attempts, 0) + 1,
    run.woken = false,
    run.updated_at = $now
RETURN run
