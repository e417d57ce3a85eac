// Locks the plan (its :PlanLock, taken before the read), then reads its phase and how many
// reviews still wait in it.
MATCH (plan:Plan {plan_id: $plan_id})
MERGE (lock:PlanLock {plan_id: $plan_id})
SET lock.writes = coalesce(lock.writes, 0) + 1
WITH plan
RETURN plan.phase AS phase,
  COUNT { MATCH (r:Review {plan_id: $plan_id}) WHERE r.status = 'pending' } AS pending_reviews
