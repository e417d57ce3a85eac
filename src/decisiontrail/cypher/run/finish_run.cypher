// A worker ends its turn with the run: waiting, succeeded or failed. A run a correction queued a
// replay for meanwhile (a failed one too: that correction's replay is owed a turn of its own), or
// one woken while it was held (what it would wait for happened), goes back to the queue instead;
// a run that finished wakes its parent's run, waiting for its children. The replays the worker
// reported failed ($failed_replays: a run given up) leave the queue, never to be run.
// Nothing when the claim is no longer the worker's own.
//
// Each run is locked (the SET of `_locked`) before it is judged: a value read before the lock is
// the one committed when the statement began, and a child's finish or a review's wake committed
// in between (`woken`, `status`) would be overwritten by what was judged from it, the parent left
// waiting for a child that has finished (neo4j's "lost update"; claim_run does the same).
MATCH (run:PlanRun {run_id: $run_id})
SET run._locked = true
REMOVE run._locked
WITH run
WHERE run.status = 'running' AND run.claimed_by = $worker AND run.attempts = $attempts
WITH run, [attempt IN coalesce(run.replays, []) WHERE NOT attempt IN $failed_replays] AS replays
WITH run, replays,
     CASE
       WHEN size(replays) > 0 THEN 'queued'
       WHEN $status = 'waiting' AND coalesce(run.woken, false) THEN 'queued'
       ELSE $status
     END AS status
SET run += $changes,
    run.replays = replays,
    run.status = status,
    run.woken = false,
    run.claimed_by = null,
    run.lease_until = null,
    run.attempts = CASE WHEN status IN ['queued', 'waiting'] THEN 0 ELSE run.attempts END,
    run.updated_at = $now
WITH run
CALL (run) {
  MATCH (parent:PlanRun {run_id: run.parent_run_id})
  WHERE run.status IN ['succeeded', 'failed', 'cancelled']
  SET parent._locked = true
  REMOVE parent._locked
  WITH parent
  WHERE parent.status IN ['waiting', 'running']
  SET parent.woken = parent.status = 'running',
      parent.status = CASE WHEN parent.status = 'waiting' THEN 'queued' ELSE parent.status END,
      parent.updated_at = $now
}
RETURN run
