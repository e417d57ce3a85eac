// Takes the write lock of every plan in a batch of recordings, then reads every fact the rules
// judge each recording by (domain.placement), in one round trip.
// The lock is the plan's :PlanLock node, written first (a write takes the node's exclusive lock
// before anything below reads), in plan-id order, so two batches never wait on each other
// crosswise: everything below runs under it, so two writers into one plan never see the same
// state. It is not the :Plan node itself, because Neo4j aborts a transaction waiting for a node's
// lock with DeadlockDetected whenever the holder links a relationship to that node, and every
// recording links its decision to the plan. What earlier recordings of the same batch will add
// (sequence numbers, parents, dependencies) is the judge's to fold in.
UNWIND $plan_ids AS locked_id
OPTIONAL MATCH (locked:Plan {plan_id: locked_id})
FOREACH (_ IN CASE WHEN locked IS NULL THEN [] ELSE [1] END |
  MERGE (lock:PlanLock {plan_id: locked_id}) SET lock.writes = coalesce(lock.writes, 0) + 1)
WITH count(*) AS locks
UNWIND $items AS item
OPTIONAL MATCH (plan:Plan {plan_id: item.plan_id})
CALL (item) {
  OPTIONAL MATCH (root:Decision {plan_id: item.plan_id, decision_type: 'prompt_definition'})
  WHERE NOT EXISTS { (root)-[:SUPERSEDED_BY]->() }
  RETURN collect(root.decision_id)[0] AS current_root_id
}
CALL (item) {
  // Parent inference: the latest current decision of a parent type, the same actor run's first.
  UNWIND CASE WHEN item.infer_parent THEN item.parent_types ELSE [] END AS parent_type
  MATCH (candidate:Decision {plan_id: item.plan_id, decision_type: parent_type})
  WHERE NOT EXISTS { (candidate)-[:SUPERSEDED_BY]->() }
  WITH candidate
  ORDER BY CASE WHEN candidate.actor_state_thread_id = item.actor_thread THEN 0 ELSE 1 END,
           candidate.sequence_number DESC
  WITH collect(candidate)[0] AS best
  RETURN best.decision_id AS inferred_parent_id, best.actor_state_thread_id AS inferred_parent_thread
}
OPTIONAL MATCH (parent:Decision {decision_id: item.parent_decision_id})
RETURN
  item.index AS index,
  plan IS NOT NULL AS plan_exists,
  plan.next_sequence AS sequence_number,
  plan.phase AS plan_phase,
  plan.automation_edit_code AS automation_edit_code,
  plan.automation_execute_command AS automation_execute_command,
  EXISTS { MATCH (:Decision {decision_id: item.decision_id}) } AS decision_exists,
  current_root_id,
  inferred_parent_id,
  inferred_parent_thread,
  parent IS NOT NULL AS parent_exists,
  parent.plan_id AS parent_plan_id,
  parent IS NOT NULL AND EXISTS { (parent)-[:SUPERSEDED_BY]->() } AS parent_superseded,
  [id IN item.depends_on WHERE NOT EXISTS { MATCH (:Decision {decision_id: id}) }] AS missing_dependencies,
  [id IN item.depends_on WHERE EXISTS { MATCH (:Decision {decision_id: id})-[:SUPERSEDED_BY]->() }] AS superseded_dependencies,
  item.corrects_decision_id IS NULL OR EXISTS { MATCH (:Decision {decision_id: item.corrects_decision_id}) } AS corrected_exists,
  // A key is scoped to its plan; the digest tells the same request from another one with the key.
  COLLECT { MATCH (known:Decision {plan_id: item.plan_id, idempotency_key: item.idempotency_key}) RETURN [known.decision_id, known.request_digest] }[0] AS existing_decision,
  COLLECT { MATCH (held:Review {plan_id: item.plan_id, idempotency_key: item.idempotency_key}) RETURN [held.review_id, held.request_digest] }[0] AS existing_review
ORDER BY index
