// Where a decision comes from: its ancestors to the root, upward through the plans that
// spawned its plan (IN_PLAN, then SPAWNED_BY), and everything it depends on (DEPENDS_ON),
// transitively and mixed. The same walk as the downstream closure, forwards.
MATCH (origin:Decision {decision_id: $decision_id})
OPTIONAL MATCH ANY (origin) (()-[:PARENT|DEPENDS_ON|IN_PLAN|SPAWNED_BY]->())+ (reached)
WITH collect(DISTINCT reached) AS reached
RETURN
  [x IN reached WHERE x:Decision | x.decision_id] AS decision_ids,
  [x IN reached WHERE x:Plan | x.plan_id] AS plan_ids
