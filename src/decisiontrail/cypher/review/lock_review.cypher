// Locks the review before reading its status, so of two concurrent resolutions one wins.
MATCH (review:Review {review_id: $review_id})
SET review.status = review.status + ''
RETURN review {.*} AS review,
  [(review)-[:RESOLVED_AS]->(d:Decision) | d.decision_id][0] AS decision_id
