// Locks the decision to correct and its plan (its :PlanLock: recordings into the plan wait),
// then reads what the correction rules need. Of two concurrent corrections, the second reads the first's.
MATCH (origin:Decision {decision_id: $decision_id})-[:IN_PLAN]->(plan:Plan)
SET origin.lock__ = true
REMOVE origin.lock__
MERGE (lock:PlanLock {plan_id: plan.plan_id})
FOREACH (taken IN CASE WHEN lock.holder = $holder THEN [] ELSE [1] END |
  SET lock.writes = coalesce(lock.writes, 0) + 1, lock.holder = $holder)
WITH origin, plan
RETURN
  plan.plan_id AS plan_id,
  plan.phase AS plan_phase,
  [(origin)-[:SUPERSEDED_BY]->(successor:Decision) | successor.decision_id][0] AS superseded_by,
  [path = (origin)-[:CORRECTS|REPLACES*0..]->(first:Decision) WHERE NOT EXISTS { (first)-[:CORRECTS|REPLACES]->() } |
    [first.decision_id, length(path)]][0] AS chain
