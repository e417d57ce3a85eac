UNWIND $review_ids AS review_id
MATCH (review:Review {review_id: review_id})
RETURN review {.*} AS review,
  [(review)-[:RESOLVED_AS]->(d:Decision) | d.decision_id][0] AS decision_id
