// Facts check_spawn_link judges a new plan by. Takes the spawning plan's write lock (its
// :PlanLock) first: a correction holds it from reading its downstream to committing, so a child
// plan is either created before the correction reads (and then invalidated with the spawn) or
// judged after it commits (and then refused, its spawn superseded); never linked to a spawn
// superseded meanwhile. Then locks the spawning decision, so the link is judged and written
// against the same state: of two plans naming one subplan_spawn at once, the second reads the
// first as its existing child.
OPTIONAL MATCH (spawning:Decision {decision_id: $spawned_by_decision_id})
FOREACH (_ IN CASE WHEN spawning IS NULL THEN [] ELSE [1] END |
  MERGE (lock:PlanLock {plan_id: spawning.plan_id})
  FOREACH (taken IN CASE WHEN lock.holder = $holder THEN [] ELSE [1] END |
    SET lock.writes = coalesce(lock.writes, 0) + 1, lock.holder = $holder))
WITH spawning
SET spawning.lock__ = true
REMOVE spawning.lock__
RETURN
  EXISTS { MATCH (:Plan {plan_id: $plan_id}) } AS plan_exists,
  EXISTS { MATCH (:Plan {plan_id: $parent_plan_id}) } AS parent_plan_exists,
  spawning IS NOT NULL AS spawning_exists,
  spawning.plan_id AS spawning_plan_id,
  spawning.decision_type AS spawning_type,
  spawning IS NOT NULL AND EXISTS { (spawning)-[:SUPERSEDED_BY]->() } AS spawning_superseded,
  COLLECT { MATCH (parent:Plan {plan_id: spawning.plan_id}) RETURN parent.phase }[0] AS parent_phase,
  COLLECT { MATCH (child:Plan)-[:SPAWNED_BY]->(spawning) RETURN child.plan_id ORDER BY child.plan_id } AS children
