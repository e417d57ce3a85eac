MATCH (plan:Plan {plan_id: $plan_id})
CREATE (review:Review $props)-[:FOR_PLAN]->(plan)
WITH review
CALL (review) {
  UNWIND CASE WHEN $context IS NULL THEN [] ELSE [$context] END AS context
  MERGE (c:Context {context_hash: context.context_hash})
    ON CREATE SET c.content = context.content, c.size = size(context.content), c.created_at = datetime()
  CREATE (review)-[:CAPTURED]->(c)
}
RETURN review.review_id AS review_id
