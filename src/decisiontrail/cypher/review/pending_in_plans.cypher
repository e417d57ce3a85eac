// The pending reviews of the given plans, oldest first: those a correction may make moot.
UNWIND $plan_ids AS plan_id
MATCH (review:Review {plan_id: plan_id})
WHERE review.status = 'pending'
WITH review ORDER BY review.created_at, review.review_id
RETURN review {.*} AS review, null AS decision_id
