// Where a decision comes from: its ancestors to the root, upward through the plans that
// spawned its plan (IN_PLAN, then SPAWNED_BY), and everything it depends on (DEPENDS_ON),
// transitively and mixed. The same walk as the downstream closure, forwards.
// A variable-length pattern whose end nodes are collected DISTINCT is planned as a breadth-first
// walk with a visited set (VarLengthExpand(Pruning,BFS)): each node and edge is reached once,
// however many routes lead to it. Do not name the path's relationships or slice its nodes:
// either makes the planner enumerate every path, which multiplies with hierarchy depth.
// One statement answers the whole question: whether the decision exists, when it was recorded
// (an as-of read is judged by it), and the walk.
// Everything a decision comes from is older than it, except a dependency added later (a replay's
// report, addDependency), which is dated (`at`): as of a moment ($as_of; null: now) before it,
// it is not followed. A predicate over all relationships(path) keeps the walk breadth-first.
OPTIONAL MATCH (origin:Decision {decision_id: $decision_id})
OPTIONAL MATCH path = (origin)-[:PARENT|DEPENDS_ON|IN_PLAN|SPAWNED_BY*]->(reached)
WHERE all(r IN relationships(path) WHERE r.at IS NULL OR $as_of IS NULL OR r.at <= $as_of)
WITH origin, collect(DISTINCT reached) AS reached
RETURN
  origin IS NOT NULL AS found,
  toString(origin.created_at) AS created_at,
  [x IN reached WHERE x:Decision | x.decision_id] AS decision_ids,
  [x IN reached WHERE x:Plan | x.plan_id] AS plan_ids
