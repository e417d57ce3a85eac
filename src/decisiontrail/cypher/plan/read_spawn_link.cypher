// Facts check_spawn_link judges a new plan by. Locks the spawning decision, so the
// link is judged and written against the same state.
OPTIONAL MATCH (spawning:Decision {decision_id: $spawned_by_decision_id})
SET spawning.lock__ = true
REMOVE spawning.lock__
RETURN
  EXISTS { MATCH (:Plan {plan_id: $plan_id}) } AS plan_exists,
  EXISTS { MATCH (:Plan {plan_id: $parent_plan_id}) } AS parent_plan_exists,
  spawning IS NOT NULL AS spawning_exists,
  spawning.plan_id AS spawning_plan_id,
  spawning.decision_type AS spawning_type,
  spawning IS NOT NULL AND EXISTS { (spawning)-[:SUPERSEDED_BY]->() } AS spawning_superseded
