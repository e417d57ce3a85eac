// The writes of a batch of placed decisions (domain.placement), composed into every statement
// that records decisions: decision/create_decisions, and correction/supersede_downstream, which
// writes the correction decision with its supersession. Its parameters are
// graphdb.decisions.creation_params': $rows, $plans, $named_ids. It leaves `created` (each
// decision with its row) for the statement that includes it.
// Each plan ($plans) and each decision the rows name ($named_ids: parents, dependencies, the
// corrected) is matched once, and a row names them by their place in the list: in a statement
// that writes, a unique index seek locks the entry it reads, and a seek per decision (its plan,
// its parent) cost a batch of 1,000 a seventh of this statement. Every decision is created before
// the first link is made (a row may link to a decision of the same batch). Each kind of link runs
// over the decisions that have one (most have a parent only): a subquery per decision for each
// kind cost a large batch's write a tenth of its time.
WITH [counter IN $plans | COLLECT { MATCH (plan:Plan {plan_id: counter.plan_id}) RETURN plan }[0]] AS plans
UNWIND $rows AS row
WITH row, plans[row.plan] AS plan
CREATE (d:Decision)-[:IN_PLAN]->(plan)
SET d = row.props, d.created_at = datetime(row.created_at)
WITH collect({d: d, row: row}) AS created
// Matched once the batch's own decisions exist: a row may name one of them.
WITH created, [id IN $named_ids | COLLECT { MATCH (named:Decision {decision_id: id}) RETURN named }[0]] AS named
CALL (created) {
  UNWIND [item IN created WHERE item.row.context IS NOT NULL] AS item
  WITH item.d AS d, item.row.context AS context
  MERGE (c:Context {context_hash: context.context_hash})
    ON CREATE SET c.content = context.content, c.size = size(context.content), c.created_at = datetime()
  CREATE (d)-[:CAPTURED]->(c)
}
CALL (created) {
  UNWIND [item IN created WHERE item.row.checkpoint_group IS NOT NULL] AS item
  WITH item.d AS d, item.row.checkpoint_group AS group
  CREATE (d)-[:CHECKPOINTED_IN]->(:CheckpointGroup {
    group_id: group.group_id, thread_id: group.thread_id, checkpoint_ns: group.checkpoint_ns,
    checkpoint_id: group.checkpoint_id, resources: group.resources, created_at: d.created_at
  })
}
CALL (created, named) {
  UNWIND [item IN created WHERE item.row.parent IS NOT NULL] AS item
  WITH item.d AS d, named[item.row.parent] AS parent
  CREATE (d)-[:PARENT]->(parent)
}
CALL (created, named) {
  UNWIND [item IN created WHERE size(item.row.depends_on) > 0] AS item
  WITH item.d AS d, item.row AS row
  UNWIND range(0, size(row.depends_on) - 1) AS ordinal
  WITH d, ordinal, named[row.depends_on[ordinal]] AS dependency
  CREATE (d)-[:DEPENDS_ON {ordinal: ordinal}]->(dependency)
}
CALL (created, named) {
  UNWIND [item IN created WHERE item.row.corrects IS NOT NULL] AS item
  WITH item.d AS d, named[item.row.corrects] AS original
  CREATE (d)-[:CORRECTS]->(original)
}
CALL (created) {
  UNWIND [item IN created WHERE item.row.review_id IS NOT NULL] AS item
  WITH item.d AS d, item.row AS row
  MATCH (review:Review {review_id: row.review_id})
  CREATE (review)-[:RESOLVED_AS]->(d)
  // The decision a review resolves as keeps the context the review captured for it.
  WITH review, d
  MATCH (review)-[:CAPTURED]->(c:Context {context_hash: d.hot_context_hash})
  WHERE NOT EXISTS { (d)-[:CAPTURED]->(c) }
  CREATE (d)-[:CAPTURED]->(c)
}
CALL () {
  UNWIND $plans AS counter
  MATCH (plan:Plan {plan_id: counter.plan_id})
  SET plan.next_sequence = counter.next_sequence
}
