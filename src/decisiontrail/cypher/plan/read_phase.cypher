// Locks the plan (its :PlanLock, taken before the read), then reads its phase, how many reviews
// still wait in it, how many current strategy choices it has, the invariants it declares and the
// rationales of its current invariant_enforced decisions (each names the invariant it enforces).
MATCH (plan:Plan {plan_id: $plan_id})
MERGE (lock:PlanLock {plan_id: $plan_id})
FOREACH (taken IN CASE WHEN lock.holder = $holder THEN [] ELSE [1] END |
  SET lock.writes = coalesce(lock.writes, 0) + 1, lock.holder = $holder)
WITH plan
RETURN plan.phase AS phase,
  COUNT { MATCH (r:Review {plan_id: $plan_id}) WHERE r.status = 'pending' } AS pending_reviews,
  COUNT {
    MATCH (d:Decision {plan_id: $plan_id, decision_type: 'strategy_choice'})
    WHERE d.sequence_number IS NOT NULL AND d.superseded_at IS NULL  // decision_plan_type_sequence's seek
  } AS strategy_choices,
  plan.invariants AS invariants,
  COLLECT {
    MATCH (d:Decision {plan_id: $plan_id, decision_type: 'invariant_enforced'})
    WHERE d.sequence_number IS NOT NULL AND d.superseded_at IS NULL
    RETURN d.rationale
  } AS enforcing
