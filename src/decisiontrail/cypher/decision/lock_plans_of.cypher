// Locks the plans of the given decisions (their :PlanLock, in plan-id order, as a batch of
// recordings takes them; see decision/read_placements) and returns the ids of those that exist.
// Influence added between two decisions takes both plans' locks: a correction superseding either
// holds its plan's lock until it commits, so the new edge is judged on what the correction wrote.
UNWIND $decision_ids AS decision_id
MATCH (decision:Decision {decision_id: decision_id})
WITH collect(decision.decision_id) AS found, collect(DISTINCT decision.plan_id) AS plan_ids
CALL (plan_ids) {
  UNWIND plan_ids AS plan_id
  WITH plan_id
  ORDER BY plan_id
  MERGE (lock:PlanLock {plan_id: plan_id})
  FOREACH (taken IN CASE WHEN lock.holder = $holder THEN [] ELSE [1] END |
    SET lock.writes = coalesce(lock.writes, 0) + 1, lock.holder = $holder)
  RETURN count(*) AS locked
}
RETURN found
