MATCH (review:Review {plan_id: $plan_id})
WHERE $status IS NULL OR review.status = $status
WITH review ORDER BY review.created_at, review.review_id
RETURN review {.*} AS review,
  [(review)-[:RESOLVED_AS]->(d:Decision) | d.decision_id][0] AS decision_id
