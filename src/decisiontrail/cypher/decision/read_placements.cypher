// Takes the write lock of every plan in a batch of recordings, then reads every fact the rules
// judge each recording by (domain.placement), in one round trip:
// a plan's facts once per plan, a parent's once per parent, each recording's own once per
// recording, all in one row (a row per recording cost the server and the driver a message each).
// The lock is the plan's :PlanLock node, written first (a write takes the node's exclusive lock
// before anything below reads), in plan-id order, so two batches never wait on each other
// crosswise: everything below runs under it, so two writers into one plan never see the same
// state. It is not the :Plan node itself, because Neo4j aborts a transaction waiting for a node's
// lock with DeadlockDetected whenever the holder links a relationship to that node, or sets a
// property of it from its own value (SET n.x = n.x + 1) again, and every recording links its
// decision to the plan. For the same reason a write increments its :PlanLock's count once (the
// lock's holder token: graphdb.database.lock_holder) and counts anything else under it on the
// :Plan. What earlier recordings of the same batch will add (sequence numbers, parents,
// dependencies) is the judge's to fold in.
// The plans of the decisions the batch depends on are locked too: a correction holds the lock of
// every plan its downstream touches until it commits, so a recording that depends on a decision
// being superseded waits, then reads it superseded and is refused. (Read before the correction
// committed, the dependency looked current, and the new decision escaped the supersession.)
CALL () {
  UNWIND $plan_ids + COLLECT {
    UNWIND $dependency_ids AS dependency_id
    MATCH (dependency:Decision {decision_id: dependency_id})
    RETURN dependency.plan_id
  } AS locked_id
  WITH DISTINCT locked_id
  ORDER BY locked_id
  OPTIONAL MATCH (locked:Plan {plan_id: locked_id})
  FOREACH (_ IN CASE WHEN locked IS NULL THEN [] ELSE [1] END |
    MERGE (lock:PlanLock {plan_id: locked_id})
    FOREACH (taken IN CASE WHEN lock.holder = $holder THEN [] ELSE [1] END |
      SET lock.writes = coalesce(lock.writes, 0) + 1, lock.holder = $holder))
  RETURN count(*) AS locks
}
UNWIND $plan_ids AS plan_id
OPTIONAL MATCH (plan:Plan {plan_id: plan_id})
CALL (plan_id) {
  // A seek, hinted: on fresh statistics the planner scanned the whole index instead, even with
  // USING INDEX (a scan uses the index too), so placing cost as much as the database was large.
  RETURN COLLECT {
    MATCH (root:Decision {plan_id: plan_id, decision_type: 'prompt_definition'})
    USING INDEX SEEK root:Decision(plan_id, decision_type, sequence_number)
    WHERE root.sequence_number IS NOT NULL AND NOT EXISTS { (root)-[:SUPERSEDED_BY]->() }
    RETURN root.decision_id
  }[0] AS current_root_id
}
// Reviews of the plan whose approval lapsed and that no review has asked again: a recording
// asking one's question is held for a person (domain.placement). A seek on review_plan_status,
// which finds none in almost every plan.
CALL (plan_id) {
  RETURN COLLECT {
    MATCH (lapsed:Review {plan_id: plan_id, status: 'lapsed'})
    USING INDEX SEEK lapsed:Review(plan_id, status)
    WHERE lapsed.reopened_by IS NULL
    WITH lapsed ORDER BY lapsed.created_at, lapsed.review_id
    RETURN [lapsed.review_id, lapsed.proposal]
  } AS lapsed_reviews
}
WITH collect({
  plan_exists: plan IS NOT NULL,
  sequence_number: plan.next_sequence,
  plan_phase: plan.phase,
  automation_edit_code: plan.automation_edit_code,
  automation_execute_command: plan.automation_execute_command,
  current_root_id: current_root_id,
  lapsed_reviews: lapsed_reviews
}) AS plans,  // in $plan_ids' order: an item names its plan by plan_index
  // Whether a review in the plan holds a key: most plans have none, and then no recording's key
  // is looked up among reviews (the seek per recording was a sixth of this statement's time).
  collect(EXISTS {
    MATCH (held:Review {plan_id: plan_id})
    USING INDEX SEEK held:Review(plan_id, idempotency_key)
    WHERE held.idempotency_key IS NOT NULL
  }) AS keyed_reviews
// Each decision the batch names (parents, dependencies, the corrected), read once (a batch's
// recordings mostly share one or two; in a statement that writes, a unique index seek locks the
// entry it reads, and a seek per dependency and recording cost as much again): whether it exists,
// its plan, whether it is superseded, or null. An item names them by their places in $named_ids.
WITH plans, keyed_reviews, COLLECT {
  UNWIND $named_ids AS named_id
  OPTIONAL MATCH (named:Decision {decision_id: named_id})
  RETURN named {.plan_id, superseded: EXISTS { (named)-[:SUPERSEDED_BY]->() }}
} AS named
// What parent inference judges by (domain.placement.inferred_parent), once for each plan, type
// and actor run of the batch's recordings that name no parent (an item names it by
// inference_index): the latest current decision of a parent type in the plan, and the latest in
// the actor run. Each parent type's latest, and its latest in the actor run, is an ordered seek
// from the end of its index (decision_plan_type_sequence, and _run_sequence), stepping back only
// over superseded decisions: ordered by every property of the index, the planner reads it
// backwards and stops at the first that qualifies, where ordered by the sequence number alone it
// read all the plan's decisions of the type and sorted them.
WITH plans, keyed_reviews, named, COLLECT {
  UNWIND $inferences AS inference
  CALL (inference) {
    UNWIND inference.parent_types AS parent_type
    UNWIND COLLECT {
      MATCH (c:Decision {plan_id: inference.plan_id, decision_type: parent_type})
      USING INDEX SEEK c:Decision(plan_id, decision_type, sequence_number)
      WHERE c.sequence_number IS NOT NULL AND NOT EXISTS { (c)-[:SUPERSEDED_BY]->() }
      WITH c ORDER BY c.plan_id DESC, c.decision_type DESC, c.sequence_number DESC LIMIT 1
      RETURN c
    } AS found
    WITH found ORDER BY found.sequence_number DESC
    RETURN collect(found.decision_id)[0] AS latest
  }
  CALL (inference) {
    UNWIND inference.parent_types AS parent_type
    UNWIND COLLECT {
      MATCH (c:Decision {plan_id: inference.plan_id, decision_type: parent_type, actor_state_thread_id: inference.actor_thread})
      USING INDEX SEEK c:Decision(plan_id, decision_type, actor_state_thread_id, sequence_number)
      WHERE c.sequence_number IS NOT NULL AND NOT EXISTS { (c)-[:SUPERSEDED_BY]->() }
      WITH c ORDER BY c.plan_id DESC, c.decision_type DESC, c.actor_state_thread_id DESC, c.sequence_number DESC LIMIT 1
      RETURN c
    } AS found
    WITH found ORDER BY found.sequence_number DESC
    RETURN collect(found.decision_id)[0] AS latest_in_run
  }
  RETURN {latest: latest, latest_in_run: latest_in_run}
} AS candidates
UNWIND $items AS item
WITH item, plans[item.plan_index] AS plan_facts, keyed_reviews[item.plan_index] AS keyed_reviews,
  candidates[item.inference_index] AS candidates, named[item.parent] AS parent, named
WITH item, plan_facts {
  .*,
  // Looked up only for a decision the service built whole: an actor's draft has a fresh ULID.
  decision_exists: CASE WHEN item.decision_id IS NULL THEN false ELSE EXISTS { MATCH (:Decision {decision_id: item.decision_id}) } END,
  latest_of_parent_types: candidates.latest,
  latest_of_parent_types_in_run: candidates.latest_in_run,
  parent_exists: parent IS NOT NULL,
  parent_plan_id: parent.plan_id,
  parent_superseded: parent IS NOT NULL AND parent.superseded,
  missing_dependencies: [i IN item.depends_on WHERE named[i] IS NULL | $named_ids[i]],
  superseded_dependencies: [i IN item.depends_on WHERE named[i].superseded | $named_ids[i]],
  corrected_exists: item.corrects IS NULL OR named[item.corrects] IS NOT NULL,
  // A key is scoped to its plan; the digest tells the same request from another one with the key.
  // Looked up only for a key (a null key matches nothing, and the planner would scan the plan for it),
  // by a seek, hinted: planned on statistics of a database that has since grown (a fresh one, say),
  // the lookup read the plan's decisions through decision_plan_id instead, every one for each key.
  existing_decision: CASE WHEN item.idempotency_key IS NULL THEN null ELSE COLLECT {
    MATCH (known:Decision {plan_id: item.plan_id, idempotency_key: item.idempotency_key})
    USING INDEX SEEK known:Decision(plan_id, idempotency_key)
    RETURN [known.decision_id, known.request_digest]
  }[0] END,
  existing_review: CASE WHEN item.idempotency_key IS NULL OR NOT keyed_reviews THEN null ELSE COLLECT {
    MATCH (held:Review {plan_id: item.plan_id, idempotency_key: item.idempotency_key})
    USING INDEX SEEK held:Review(plan_id, idempotency_key)
    RETURN [held.review_id, held.request_digest]
  }[0] END
} AS facts
ORDER BY item.index
RETURN collect(facts) AS facts
