// One page of plans in creation order (plan ids are ULIDs), after the cursor (a plan id), or, when
// $newest_first, newest first, before the cursor; and, when $count, how many match (else null);
// $search (lower case) keeps those whose description, id or project holds it. The page is an ordered
// seek of plan_id_unique from the cursor, one way or the other, which stops once the page is full;
// the count reads every plan, and is skipped unless asked for. Visibility is access/_sees_plan.
CALL () {
  WITH 1 AS counted WHERE $count
  MATCH (plan:Plan)
  WHERE
    // include: access/_sees_plan
    AND ($phase IS NULL OR plan.phase = $phase)
    AND ($top_level IS NULL OR $top_level = (NOT EXISTS { (plan)-[:CHILD_OF]->() }))
    AND ($search IS NULL OR toLower(plan.description) CONTAINS $search OR toLower(plan.plan_id) CONTAINS $search
         OR toLower(coalesce(plan.project, '')) CONTAINS $search)
  RETURN count(plan) AS total
}
CALL () {
  CALL () {
    WITH 1 AS oldest_first WHERE NOT $newest_first
    MATCH (plan:Plan)
    USING INDEX SEEK plan:Plan(plan_id)
    WHERE plan.plan_id > coalesce($after, '')
      AND
      // include: access/_sees_plan
      AND ($phase IS NULL OR plan.phase = $phase)
      AND ($top_level IS NULL OR $top_level = (NOT EXISTS { (plan)-[:CHILD_OF]->() }))
      AND ($search IS NULL OR toLower(plan.description) CONTAINS $search OR toLower(plan.plan_id) CONTAINS $search
           OR toLower(coalesce(plan.project, '')) CONTAINS $search)
    WITH plan ORDER BY plan.plan_id
    LIMIT $limit
    RETURN plan.plan_id AS plan_id
    UNION ALL
    WITH 1 AS newest_first WHERE $newest_first
    MATCH (plan:Plan)
    USING INDEX SEEK plan:Plan(plan_id)
    WHERE plan.plan_id < coalesce($after, '\uffff')
      AND
      // include: access/_sees_plan
      AND ($phase IS NULL OR plan.phase = $phase)
      AND ($top_level IS NULL OR $top_level = (NOT EXISTS { (plan)-[:CHILD_OF]->() }))
      AND ($search IS NULL OR toLower(plan.description) CONTAINS $search OR toLower(plan.plan_id) CONTAINS $search
           OR toLower(coalesce(plan.project, '')) CONTAINS $search)
    WITH plan ORDER BY plan.plan_id DESC
    LIMIT $limit
    RETURN plan.plan_id AS plan_id
  }
  RETURN collect(plan_id) AS plan_ids
}
RETURN CASE WHEN $count THEN total END AS total, plan_ids
