// A plan's reviews, sought in review_plan_status (every review has a status): hinted, as with no
// reviews yet the planner read every one.
MATCH (review:Review {plan_id: $plan_id})
USING INDEX review:Review(plan_id, status)
WHERE review.status IS NOT NULL AND ($status IS NULL OR review.status = $status)
WITH review ORDER BY review.created_at, review.review_id
RETURN review {.*} AS review,
  [(review)-[:RESOLVED_AS]->(d:Decision) | d.decision_id][0] AS decision_id
