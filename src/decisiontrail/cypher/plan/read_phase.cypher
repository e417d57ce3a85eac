// Locks the plan (a direct dependency: the lock is taken before the read), then reads its
// phase and how many reviews still wait in it.
MATCH (plan:Plan {plan_id: $plan_id})
SET plan.phase = plan.phase + ''
RETURN plan.phase AS phase,
  COUNT { MATCH (r:Review {plan_id: $plan_id}) WHERE r.status = 'pending' } AS pending_reviews
