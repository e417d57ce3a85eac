// In a correction's transaction: the corrected plan's run, if the runtime runs it, is given the
// attempt to replay (queued, unless a worker holds it: that worker queues it when its turn ends);
// the runs of the child plans the correction invalidated are cancelled.
OPTIONAL MATCH (run:PlanRun {plan_id: $plan_id})
WHERE NOT run.status = 'cancelled'
WITH run ORDER BY run.created_at DESC LIMIT 1
CALL (run) {
  WITH run WHERE run IS NOT NULL
  SET run._locked = true  // locked before its replays and status are read, as in finish_run
  REMOVE run._locked
  WITH run
  SET run.replays = coalesce(run.replays, []) + $attempt_id,
      // a replay is new work: its claims are counted from none (MAX_ATTEMPTS), not after the run's past turns
      run.attempts = CASE WHEN run.status = 'running' THEN run.attempts ELSE 0 END,
      run.status = CASE WHEN run.status = 'running' THEN 'running' ELSE 'queued' END,
      run.error = null,
      run.updated_at = $now
}
CALL () {
  UNWIND $invalidated_plan_ids AS plan_id
  MATCH (child:PlanRun {plan_id: plan_id})
  SET child._locked = true
  REMOVE child._locked
  WITH child
  WHERE NOT child.status IN ['succeeded', 'failed', 'cancelled']
  SET child.status = 'cancelled',
      child.error = 'its plan was invalidated by correction attempt ' + $attempt_id,
      child.claimed_by = null,
      child.lease_until = null,
      child.replays = [],
      child.updated_at = $now
  RETURN count(child) AS cancelled
}
RETURN run.run_id AS run_id, cancelled
