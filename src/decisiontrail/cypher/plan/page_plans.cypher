// One page of plans in creation order (plan ids are ULIDs), after the cursor (a plan id).
CALL () {
  MATCH (p:Plan)
  WHERE ($owner IS NULL OR p.owner = $owner)
    AND ($project IS NULL OR p.project = $project)
    AND ($phase IS NULL OR p.phase = $phase)
    AND ($top_level IS NULL OR $top_level = (NOT EXISTS { (p)-[:CHILD_OF]->() }))
  RETURN count(p) AS total
}
CALL () {
  MATCH (p:Plan)
  WHERE ($after IS NULL OR p.plan_id > $after)
    AND ($owner IS NULL OR p.owner = $owner)
    AND ($project IS NULL OR p.project = $project)
    AND ($phase IS NULL OR p.phase = $phase)
    AND ($top_level IS NULL OR $top_level = (NOT EXISTS { (p)-[:CHILD_OF]->() }))
  WITH p ORDER BY p.plan_id
  LIMIT $limit
  RETURN collect(p.plan_id) AS plan_ids
}
RETURN total, plan_ids
