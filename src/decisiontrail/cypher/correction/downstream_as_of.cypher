// The downstream closure of a decision as it stood at $as_of (what correcting it then would have
// invalidated), in one traversal: its structural subtree (PARENT),
// whatever depends on anything reached (DEPENDS_ON), and every decision of every plan spawned
// by anything reached (SPAWNED_BY, then IN_PLAN), transitively and mixed. All four point from
// the downstream end to what it hangs on, so the walk follows them backwards. Only what existed
// at $as_of, and was then current (decisions) or not yet invalidated (plans), is reached.
// A dependency added later (a replay's report, addDependency) is dated (`at`): before it, not followed.
// Planned as a breadth-first walk with a visited set (see decision/lineage.cypher): keep the
// predicate over all nodes(path) and the DISTINCT collect, or the walk enumerates paths.
MATCH (origin:Decision {decision_id: $decision_id})
OPTIONAL MATCH path = (origin)<-[:PARENT|DEPENDS_ON|SPAWNED_BY|IN_PLAN*]-(reached)
WHERE all(n IN nodes(path) WHERE n = origin OR (
  n.created_at <= $as_of
  AND (n.superseded_at IS NULL OR n.superseded_at > $as_of)
  AND (n.invalidated_at IS NULL OR n.invalidated_at > $as_of)))
  AND all(r IN relationships(path) WHERE r.at IS NULL OR r.at <= $as_of)
WITH origin, collect(DISTINCT reached) AS reached
RETURN
  origin.decision_id AS decision_id,
  [x IN reached WHERE x:Decision | [x.decision_id, x.decision_type, x.plan_id, x.sequence_number, x.phase,
    x.actor_state_thread_id, x.actor_state_checkpoint_ns, x.actor_state_checkpoint_id]] AS decisions,
  [x IN reached WHERE x:Plan | x.plan_id] AS plan_ids
