// Takes the plan's write lock, then reads every fact the rules judge a new decision by.
// The lock is the plan's :PlanLock node, written first (a write takes the node's exclusive lock
// before anything below reads): everything below runs under it, so two writers into one plan
// never see the same state. It is not the :Plan node itself, because Neo4j aborts a transaction
// waiting for a node's lock with DeadlockDetected whenever the holder links a relationship to
// that node, and every recording links its decision to the plan. The sequence number is taken
// here and the counter advanced by create_decision.
OPTIONAL MATCH (plan:Plan {plan_id: $plan_id})
FOREACH (_ IN CASE WHEN plan IS NULL THEN [] ELSE [1] END |
  MERGE (lock:PlanLock {plan_id: $plan_id}) SET lock.writes = coalesce(lock.writes, 0) + 1)
WITH plan
CALL () {
  OPTIONAL MATCH (root:Decision {plan_id: $plan_id, decision_type: 'prompt_definition'})
  WHERE NOT EXISTS { (root)-[:SUPERSEDED_BY]->() }
  RETURN collect(root.decision_id)[0] AS current_root_id
}
CALL () {
  // Parent inference: the latest current decision of a parent type, the same actor run's first.
  UNWIND CASE WHEN $infer_parent THEN $parent_types ELSE [] END AS parent_type
  MATCH (candidate:Decision {plan_id: $plan_id, decision_type: parent_type})
  WHERE NOT EXISTS { (candidate)-[:SUPERSEDED_BY]->() }
  WITH candidate
  ORDER BY CASE WHEN candidate.actor_state_thread_id = $actor_thread THEN 0 ELSE 1 END,
           candidate.sequence_number DESC
  RETURN collect(candidate.decision_id)[0] AS inferred_parent_id
}
WITH plan, current_root_id,
  CASE WHEN $infer_parent THEN coalesce(inferred_parent_id, current_root_id) ELSE $parent_decision_id END AS parent_id
OPTIONAL MATCH (parent:Decision {decision_id: parent_id})
RETURN
  plan IS NOT NULL AS plan_exists,
  plan.next_sequence AS sequence_number,
  plan.phase AS plan_phase,
  plan.automation_edit_code AS automation_edit_code,
  plan.automation_execute_command AS automation_execute_command,
  EXISTS { MATCH (:Decision {decision_id: $decision_id}) } AS decision_exists,
  current_root_id,
  parent_id AS parent_decision_id,
  parent IS NOT NULL AS parent_exists,
  parent.plan_id AS parent_plan_id,
  parent IS NOT NULL AND EXISTS { (parent)-[:SUPERSEDED_BY]->() } AS parent_superseded,
  [id IN $depends_on WHERE NOT EXISTS { MATCH (:Decision {decision_id: id}) }] AS missing_dependencies,
  [id IN $depends_on WHERE EXISTS { MATCH (:Decision {decision_id: id})-[:SUPERSEDED_BY]->() }] AS superseded_dependencies,
  EXISTS { MATCH (:Decision {decision_id: $corrects_decision_id}) } AS corrected_exists,
  // A key is scoped to its plan; the digest tells the same request from another one with the key.
  COLLECT { MATCH (known:Decision {plan_id: $plan_id, idempotency_key: $idempotency_key}) RETURN [known.decision_id, known.request_digest] }[0] AS existing_decision,
  COLLECT { MATCH (held:Review {plan_id: $plan_id, idempotency_key: $idempotency_key}) RETURN [held.review_id, held.request_digest] }[0] AS existing_review
