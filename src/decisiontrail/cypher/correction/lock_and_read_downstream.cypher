// Takes the write lock (the :PlanLock) of every plan in $plan_ids (those a correction touches
// and has not locked yet), so nothing is recorded into them, then reads the downstream closure whole under
// those locks: the walk and the columns of downstream.cypher, and the reviews pending in the
// plans just locked (those the correction may make moot; none can be held there meanwhile).
// The count() completes every lock before the walk starts.
CALL () {
  UNWIND $plan_ids AS plan_id
  MATCH (plan:Plan {plan_id: plan_id})
  MERGE (lock:PlanLock {plan_id: plan_id})
  SET lock.writes = coalesce(lock.writes, 0) + 1
  RETURN count(plan) AS locked
}
MATCH (origin:Decision {decision_id: $decision_id})
OPTIONAL MATCH path = (origin)<-[:PARENT|DEPENDS_ON|SPAWNED_BY|IN_PLAN*]-(reached)
WHERE all(n IN nodes(path) WHERE n = origin OR (n.superseded_at IS NULL AND n.invalidated_at IS NULL))
WITH origin, collect(DISTINCT reached) AS reached
RETURN
  origin.decision_id AS decision_id,
  [x IN reached WHERE x:Decision | [x.decision_id, x.decision_type, x.plan_id, x.sequence_number, x.phase,
    x.actor_state_thread_id, x.actor_state_checkpoint_ns, x.actor_state_checkpoint_id]] AS decisions,
  [x IN reached WHERE x:Plan | x.plan_id] AS plan_ids,
  COLLECT {
    UNWIND $plan_ids AS plan_id
    MATCH (review:Review {plan_id: plan_id})
    WHERE review.status = 'pending'
    WITH review ORDER BY review.created_at, review.review_id
    RETURN review {.*}
  } AS pending_reviews
