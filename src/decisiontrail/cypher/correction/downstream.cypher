// The downstream closure of a decision, in one traversal: its structural subtree (PARENT),
// whatever depends on anything reached (DEPENDS_ON), and every decision of every plan spawned
// by anything reached (SPAWNED_BY, then IN_PLAN), transitively and mixed. All four point from
// the downstream end to what it hangs on, so the walk follows them backwards. Only current
// decisions and plans not yet invalidated are reached: an earlier correction already took the rest.
// Planned as a breadth-first walk with a visited set (see decision/lineage.cypher): keep the
// predicate over all nodes(path) and the DISTINCT collect, or the walk enumerates paths.
// The decision itself comes back too (none when it does not exist), with what an impact is
// judged by (what supersedes it), so an impact is one statement.
OPTIONAL MATCH (origin:Decision {decision_id: $decision_id})
OPTIONAL MATCH path = (origin)<-[:PARENT|DEPENDS_ON|SPAWNED_BY|IN_PLAN*]-(reached)
WHERE all(n IN nodes(path) WHERE n = origin OR (n.superseded_at IS NULL AND n.invalidated_at IS NULL))
WITH origin, collect(DISTINCT reached) AS reached
RETURN
  origin.decision_id AS decision_id,
  origin {
    .decision_id, .decision_type, .plan_id, .sequence_number, .phase,
    .actor_state_thread_id, .actor_state_checkpoint_ns, .actor_state_checkpoint_id
  } AS origin,
  [(origin)-[:SUPERSEDED_BY]->(successor:Decision) | successor.decision_id][0] AS superseded_by,
  [x IN reached WHERE x:Decision | x {
    .decision_id, .decision_type, .plan_id, .sequence_number, .phase,
    .actor_state_thread_id, .actor_state_checkpoint_ns, .actor_state_checkpoint_id
  }] AS decisions,
  [x IN reached WHERE x:Plan | x.plan_id] AS plan_ids
