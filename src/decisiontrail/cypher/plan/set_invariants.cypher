// Replaces the invariants a plan declares (an invariant added to it, or removed from it by a
// correction, or the scopes gathered again at a Strategize entry); with $removed, the names removed
// from it (removeInvariant), which a gathering keeps out.
MATCH (plan:Plan {plan_id: $plan_id})
SET plan.invariants = $invariants,
    plan.removed_invariants = coalesce($removed, plan.removed_invariants)
