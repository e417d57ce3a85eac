// A correction's first statement. Locks the decision to correct and its plan (its :PlanLock:
// recordings into the plan wait; of two concurrent corrections the second reads the first's), then reads what
// the correction rules need: the decision whole (the columns of decision/get_decisions), its
// correction chain, and the plans its downstream touches, which the correction locks next
// (the walk of downstream.cypher, plan ids only).
MATCH (d:Decision {decision_id: $decision_id})-[:IN_PLAN]->(plan:Plan)
SET d.lock__ = true
REMOVE d.lock__
MERGE (lock:PlanLock {plan_id: plan.plan_id})
SET lock.writes = coalesce(lock.writes, 0) + 1
WITH d, plan
CALL (d) {
  OPTIONAL MATCH path = (d)<-[:PARENT|DEPENDS_ON|SPAWNED_BY|IN_PLAN*]-(reached)
  WHERE all(n IN nodes(path) WHERE n = d OR (n.superseded_at IS NULL AND n.invalidated_at IS NULL))
  WITH collect(DISTINCT reached) AS reached
  RETURN [x IN reached | x.plan_id] AS touched_plan_ids
}
RETURN
  plan.phase AS plan_phase,
  touched_plan_ids,
  [path = (d)-[:CORRECTS|REPLACES*0..]->(first:Decision) WHERE NOT EXISTS { (first)-[:CORRECTS|REPLACES]->() } |
    [first.decision_id, length(path)]][0] AS chain,
  d {
    .decision_id, .plan_id, .sequence_number, .decision_type, .phase, .question, .chosen_option,
    .alternatives_considered, .confidence_score, .hot_context_hash, .hot_context_ref, .relevant_resources,
    .actor_state_thread_id, .actor_state_checkpoint_ns, .actor_state_checkpoint_id, .rationale, .actor_reasoning,
    .artifacts_produced, .is_correction, .correction_reason,
    // Times as ISO text: Python parses it in C, where hydrating the driver's DateTime took a third of the read.
    created_at: toString(d.created_at), superseded_at: toString(d.superseded_at)
  } AS decision,
  [(d)-[:PARENT]->(parent:Decision) | parent.decision_id][0] AS parent_decision_id,
  [(d)-[r:DEPENDS_ON]->(dependency:Decision) | [r.ordinal, dependency.decision_id]] AS depends_on,
  [(dependent:Decision)-[:DEPENDS_ON]->(d) | dependent.decision_id] AS downstream_decision_ids,
  [(child:Plan)-[:SPAWNED_BY]->(d) | child.plan_id] AS downstream_plan_ids,
  [(d)-[:CORRECTS]->(original:Decision) | original.decision_id][0] AS corrects_decision_id,
  [(d)-[:SUPERSEDED_BY]->(successor:Decision) | successor.decision_id][0] AS superseded_by
