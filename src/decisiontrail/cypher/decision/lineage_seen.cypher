// A lineage as a caller some plans are hidden from may see it, in one statement: decision/lineage's
// walk, then, if it reached a plan the caller may not see, the walk again stepping only onto what
// the caller sees (what lies beyond a hidden plan is reached through it, so it is not this
// caller's to be shown), in the first walk's order. A decision in a hidden plan is answered as one
// that does not exist. The caller sees what access/_sees_plan says it sees.
// Every node the walks reach carries its plan's id (a plan its own), so a step is judged by it.
// The second walk keeps decision/lineage's shape (no named relationships, DISTINCT ends) with a
// predicate over all nodes(path), as correction/downstream's: still a breadth-first walk.
// As of a moment ($as_of; null: now), a dependency dated after it is not followed (decision/lineage).
// The plans are sought by id, hinted: the visibility test reads as an OR of two conditions, and on
// a database whose plans had no project yet the planner answered it by scanning the project index
// for every plan reached.
OPTIONAL MATCH (origin:Decision {decision_id: $decision_id})-[:IN_PLAN]->(plan:Plan)
WHERE
  // include: access/_sees_plan
WITH origin
OPTIONAL MATCH path = (origin)-[:PARENT|DEPENDS_ON|IN_PLAN|SPAWNED_BY*]->(reached)
WHERE all(r IN relationships(path) WHERE r.at IS NULL OR $as_of IS NULL OR r.at <= $as_of)
WITH origin, collect(DISTINCT reached) AS reached
CALL (reached) {
  UNWIND reached AS x
  WITH DISTINCT x.plan_id AS plan_id
  MATCH (plan:Plan {plan_id: plan_id})
  USING INDEX plan:Plan(plan_id)
  WHERE NOT (
    // include: access/_sees_plan
  )
  RETURN collect(plan_id) AS hidden
}
OPTIONAL CALL (origin, hidden) {
  WITH origin, hidden WHERE size(hidden) > 0
  OPTIONAL MATCH path = (origin)-[:PARENT|DEPENDS_ON|IN_PLAN|SPAWNED_BY*]->(seen)
  WHERE all(n IN nodes(path) WHERE n = origin OR NOT n.plan_id IN hidden)
    AND all(r IN relationships(path) WHERE r.at IS NULL OR $as_of IS NULL OR r.at <= $as_of)
  RETURN collect(DISTINCT seen) AS seen
}
// The OPTIONAL CALL answers a row (seen = []) even when it filtered itself out, so the test is on hidden.
WITH origin, CASE WHEN size(hidden) = 0 THEN reached ELSE [x IN reached WHERE x IN seen] END AS shown
RETURN
  origin IS NOT NULL AS found,
  toString(origin.created_at) AS created_at,
  [x IN shown WHERE x:Decision | x.decision_id] AS decision_ids,
  [x IN shown WHERE x:Plan | x.plan_id] AS plan_ids
