// One page of reviews across plans, oldest first (review ids are ULIDs), after the cursor (a
// review id): the reviewer's inbox, and, when $count, how many match (else null). Visibility
// (access/_sees_plan) is applied here, with the filters. The page is an ordered seek of
// review_id_unique from the cursor, which stops once the page is full; the count reads every
// review, and is skipped unless asked for.
// As of a moment ($as_of; null: now) only reviews created by then are read, and the status filter
// is held to each review's status then: domain.as_of.review_as_it_stood's rule (lapsed only once
// it lapsed, else as it had been resolved; resolved or cancelled only once it was, else pending).
CALL () {
  WITH 1 AS counted WHERE $count
  MATCH (r:Review)-[:FOR_PLAN]->(plan:Plan)
  WHERE ($plan_id IS NULL OR r.plan_id = $plan_id)
    AND ($as_of IS NULL OR r.created_at <= $as_of)
    AND ($status IS NULL OR $status = CASE
      WHEN $as_of IS NULL THEN r.status
      WHEN r.status = 'lapsed' AND r.lapsed_at <= $as_of THEN 'lapsed'
      WHEN r.resolved_at <= $as_of THEN CASE WHEN r.status = 'lapsed' THEN r.lapsed_from ELSE r.status END
      ELSE 'pending'
    END)
    AND
    // include: access/_sees_plan
  RETURN count(r) AS total
}
CALL () {
  MATCH (r:Review)
  USING INDEX SEEK r:Review(review_id)
  WHERE r.review_id > coalesce($after, '')
    AND ($plan_id IS NULL OR r.plan_id = $plan_id)
    AND ($as_of IS NULL OR r.created_at <= $as_of)
    AND ($status IS NULL OR $status = CASE
      WHEN $as_of IS NULL THEN r.status
      WHEN r.status = 'lapsed' AND r.lapsed_at <= $as_of THEN 'lapsed'
      WHEN r.resolved_at <= $as_of THEN CASE WHEN r.status = 'lapsed' THEN r.lapsed_from ELSE r.status END
      ELSE 'pending'
    END)
  MATCH (r)-[:FOR_PLAN]->(plan:Plan)
  WHERE
    // include: access/_sees_plan
  WITH r ORDER BY r.review_id
  LIMIT $limit
  RETURN collect({review: r {.*}, decision_id: [(r)-[:RESOLVED_AS]->(d:Decision) | d.decision_id][0]}) AS reviews
}
RETURN CASE WHEN $count THEN total END AS total, reviews
