// One page of plans in creation order (plan ids are ULIDs), after the cursor (a plan id), or, when
// $newest_first, newest first, before the cursor; and, when $count, how many match (else null);
// $search (lower case) keeps those whose description, id or project holds it. The page is an ordered
// seek of plan_id_unique from the cursor, one way or the other, which stops once the page is full;
// the count reads every plan, and is skipped unless asked for.
CALL () {
  WITH 1 AS counted WHERE $count
  MATCH (p:Plan)
  WHERE ($owner IS NULL OR p.owner = $owner)
    AND ($project IS NULL OR p.project = $project)
    AND ($phase IS NULL OR p.phase = $phase)
    AND ($top_level IS NULL OR $top_level = (NOT EXISTS { (p)-[:CHILD_OF]->() }))
    AND ($search IS NULL OR toLower(p.description) CONTAINS $search OR toLower(p.plan_id) CONTAINS $search
         OR toLower(coalesce(p.project, '')) CONTAINS $search)
  RETURN count(p) AS total
}
CALL () {
  CALL () {
    WITH 1 AS oldest_first WHERE NOT $newest_first
    MATCH (p:Plan)
    USING INDEX SEEK p:Plan(plan_id)
    WHERE p.plan_id > coalesce($after, '')
      AND ($owner IS NULL OR p.owner = $owner)
      AND ($project IS NULL OR p.project = $project)
      AND ($phase IS NULL OR p.phase = $phase)
      AND ($top_level IS NULL OR $top_level = (NOT EXISTS { (p)-[:CHILD_OF]->() }))
      AND ($search IS NULL OR toLower(p.description) CONTAINS $search OR toLower(p.plan_id) CONTAINS $search
           OR toLower(coalesce(p.project, '')) CONTAINS $search)
    WITH p ORDER BY p.plan_id
    LIMIT $limit
    RETURN p.plan_id AS plan_id
    UNION ALL
    WITH 1 AS newest_first WHERE $newest_first
    MATCH (p:Plan)
    USING INDEX SEEK p:Plan(plan_id)
    WHERE p.plan_id < coalesce($after, '\uffff')
      AND ($owner IS NULL OR p.owner = $owner)
      AND ($project IS NULL OR p.project = $project)
      AND ($phase IS NULL OR p.phase = $phase)
      AND ($top_level IS NULL OR $top_level = (NOT EXISTS { (p)-[:CHILD_OF]->() }))
      AND ($search IS NULL OR toLower(p.description) CONTAINS $search OR toLower(p.plan_id) CONTAINS $search
           OR toLower(coalesce(p.project, '')) CONTAINS $search)
    WITH p ORDER BY p.plan_id DESC
    LIMIT $limit
    RETURN p.plan_id AS plan_id
  }
  RETURN collect(plan_id) AS plan_ids
}
RETURN CASE WHEN $count THEN total END AS total, plan_ids
