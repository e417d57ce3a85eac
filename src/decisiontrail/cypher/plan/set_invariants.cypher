// Replaces the invariants a plan declares (an invariant added to it, or removed from it by a correction).
MATCH (plan:Plan {plan_id: $plan_id})
SET plan.invariants = $invariants
