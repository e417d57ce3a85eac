// A batch of placed decisions, each with its plan membership, captured context, Execute
// checkpoint group, parent, dependencies, the decision it corrects and the review it resolves
// (which may be decisions of the same batch: every decision is created before the first link is
// made), and the plans' counters moved past the sequence numbers the batch took, and the events
// announcing them ($announce, or null). One round trip, whatever the batch's size. Each kind of
// link runs over the decisions that have one (most have a parent only): a subquery per decision
// for each kind cost a large batch's write a tenth of its time.
// Each plan ($plans) and each decision the rows name ($named_ids: parents, dependencies, the
// corrected) is matched once, and a row names them by their place in the list: in a statement
// that writes, a unique index seek locks the entry it reads, and a seek per decision (its plan,
// its parent) cost a batch of 1,000 a seventh of this statement.
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
// The events the write announces, if it carries them (event/append_events, verbatim).
CALL () {
  UNWIND CASE WHEN $announce IS NULL THEN [] ELSE [$announce] END AS announce
  CALL (announce) {
    UNWIND announce.runs AS run
    WITH DISTINCT run.plan_id AS plan_id ORDER BY plan_id
    MATCH (counted:Plan {plan_id: plan_id})
    SET counted.announced = coalesce(counted.announced, 0) + 1
    RETURN collect({plan_id: plan_id, write: counted.announced}) AS writes
  }
  WITH announce, writes, datetime.realtime() AS stamp, randomUUID() AS write
  UNWIND announce.runs AS run
  CREATE (:PendingEvent {
    stamp: stamp, write: write, offset: run.offset, size: run.size,
    plan_write: [w IN writes WHERE w.plan_id = run.plan_id][0].write,
    kind: run.kind, plan_id: run.plan_id, decision_ids: run.decision_ids, review_ids: run.review_ids, at: announce.at
  })
}
RETURN size(created) AS created
