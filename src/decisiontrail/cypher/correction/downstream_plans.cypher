// Which plans a decision's downstream touches (the plans of the decisions it reaches, and the
// child plans it reaches): what a correction locks before it reads the closure whole. The same
// walk as downstream.cypher, returning only plan ids.
MATCH (origin:Decision {decision_id: $decision_id})
OPTIONAL MATCH ANY (origin) (()<-[:PARENT|DEPENDS_ON|SPAWNED_BY|IN_PLAN]-(n) WHERE n.superseded_at IS NULL AND n.invalidated_at IS NULL)+ (reached)
RETURN collect(DISTINCT reached.plan_id) AS plan_ids
