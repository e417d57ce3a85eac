// One page of reviews across plans, oldest first (review ids are ULIDs), after the cursor (a
// review id): the reviewer's inbox. Visibility (owner, project) is applied here, with the filters.
CALL () {
  MATCH (r:Review)-[:FOR_PLAN]->(p:Plan)
  WHERE ($status IS NULL OR r.status = $status)
    AND ($plan_id IS NULL OR r.plan_id = $plan_id)
    AND ($owner IS NULL OR p.owner = $owner)
    AND ($project IS NULL OR p.project = $project)
  RETURN count(r) AS total
}
CALL () {
  MATCH (r:Review)-[:FOR_PLAN]->(p:Plan)
  WHERE ($after IS NULL OR r.review_id > $after)
    AND ($status IS NULL OR r.status = $status)
    AND ($plan_id IS NULL OR r.plan_id = $plan_id)
    AND ($owner IS NULL OR p.owner = $owner)
    AND ($project IS NULL OR p.project = $project)
  WITH r ORDER BY r.review_id
  LIMIT $limit
  RETURN collect({review: r {.*}, decision_id: [(r)-[:RESOLVED_AS]->(d:Decision) | d.decision_id][0]}) AS reviews
}
RETURN total, reviews
