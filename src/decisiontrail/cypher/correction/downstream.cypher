// The downstream closure of a decision, in one traversal: its structural subtree (PARENT),
// whatever depends on anything reached (DEPENDS_ON), and every decision of every plan spawned
// by anything reached (SPAWNED_BY, then IN_PLAN), transitively and mixed. All four point from
// the downstream end to what it hangs on, so the walk follows them backwards. Only current
// decisions and plans not yet invalidated are reached: an earlier correction already took the rest.
// Planned as a breadth-first walk with a visited set (see decision/lineage.cypher): keep the
// predicate over all nodes(path) and the DISTINCT collect, or the walk enumerates paths.
// The decision itself comes back too (a null decision_id when it does not exist), with what an
// impact is judged by (what supersedes it), so an impact is one statement. Each decision is a
// list (graphdb.records.impacted_from_row reads it), not a map whose keys the driver decodes again
// for every decision.
OPTIONAL MATCH (origin:Decision {decision_id: $decision_id})
OPTIONAL MATCH path = (origin)<-[:PARENT|DEPENDS_ON|SPAWNED_BY|IN_PLAN*]-(reached)
WHERE all(n IN nodes(path) WHERE n = origin OR (n.superseded_at IS NULL AND n.invalidated_at IS NULL))
WITH origin, collect(DISTINCT reached) AS reached
RETURN
  origin.decision_id AS decision_id,
  [origin.decision_id, origin.decision_type, origin.plan_id, origin.sequence_number, origin.phase,
    origin.actor_state_thread_id, origin.actor_state_checkpoint_ns, origin.actor_state_checkpoint_id] AS origin,
  [(origin)-[:SUPERSEDED_BY]->(successor:Decision) | successor.decision_id][0] AS superseded_by,
  [x IN reached WHERE x:Decision | [x.decision_id, x.decision_type, x.plan_id, x.sequence_number, x.phase,
    x.actor_state_thread_id, x.actor_state_checkpoint_ns, x.actor_state_checkpoint_id]] AS decisions,
  [x IN reached WHERE x:Plan | x.plan_id] AS plan_ids
