MATCH (plan:Plan {plan_id: $plan_id})
SET plan.next_sequence = $sequence_number + 1
CREATE (d:Decision $props)-[:IN_PLAN]->(plan)
WITH d
CALL (d) {
  MATCH (parent:Decision {decision_id: $parent_decision_id})
  CREATE (d)-[:PARENT]->(parent)
}
CALL (d) {
  UNWIND range(0, size($depends_on) - 1) AS ordinal
  MATCH (dependency:Decision {decision_id: $depends_on[ordinal]})
  CREATE (d)-[:DEPENDS_ON {ordinal: ordinal}]->(dependency)
}
CALL (d) {
  MATCH (original:Decision {decision_id: $corrects_decision_id})
  CREATE (d)-[:CORRECTS]->(original)
}
CALL (d) {
  UNWIND CASE WHEN $context IS NULL THEN [] ELSE [$context] END AS context
  MERGE (c:Context {context_hash: context.context_hash})
    ON CREATE SET c.content = context.content, c.size = size(context.content), c.created_at = datetime()
  CREATE (d)-[:CAPTURED]->(c)
}
CALL (d) {
  UNWIND CASE WHEN $checkpoint_group IS NULL THEN [] ELSE [$checkpoint_group] END AS group
  CREATE (d)-[:CHECKPOINTED_IN]->(:CheckpointGroup {
    group_id: group.group_id, thread_id: group.thread_id, checkpoint_ns: group.checkpoint_ns,
    checkpoint_id: group.checkpoint_id, resources: group.resources, created_at: d.created_at
  })
}
CALL (d) {
  MATCH (review:Review {review_id: $review_id})
  CREATE (review)-[:RESOLVED_AS]->(d)
  // The decision a review resolves as keeps the context the review captured for it.
  WITH review, d
  MATCH (review)-[:CAPTURED]->(c:Context {context_hash: d.hot_context_hash})
  WHERE NOT EXISTS { (d)-[:CAPTURED]->(c) }
  CREATE (d)-[:CAPTURED]->(c)
}
RETURN d.decision_id AS decision_id
