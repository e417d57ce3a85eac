// A batch's held proposals: each review under its plan, with the context captured for it. One
// round trip, whatever the batch's size.
UNWIND $reviews AS item
MATCH (plan:Plan {plan_id: item.plan_id})
CREATE (review:Review)-[:FOR_PLAN]->(plan)
SET review = item.props
WITH review, item
CALL (review, item) {
  UNWIND CASE WHEN item.context IS NULL THEN [] ELSE [item.context] END AS context
  MERGE (c:Context {context_hash: context.context_hash})
    ON CREATE SET c.content = context.content, c.size = size(context.content), c.created_at = datetime()
  CREATE (review)-[:CAPTURED]->(c)
}
WITH review
// A review that asks a lapsed one's question again reopens it (the lapsed one names it back).
CALL (review) {
  MATCH (lapsed:Review {review_id: review.reopens})
  SET lapsed.reopened_by = review.review_id
  CREATE (review)-[:REOPENS]->(lapsed)
}
RETURN count(review) AS created
