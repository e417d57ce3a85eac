MATCH (d:Decision {plan_id: $plan_id})
WITH d ORDER BY d.sequence_number
RETURN d {
    .decision_id, .plan_id, .sequence_number, .decision_type, .phase, .question, .chosen_option,
    .alternatives_considered, .confidence_score, .hot_context_hash, .hot_context_ref, .relevant_resources,
    .actor_state_thread_id, .actor_state_checkpoint_ns, .actor_state_checkpoint_id, .rationale, .actor_reasoning,
    .artifacts_produced, .is_correction, .correction_reason,
    // Times as ISO text: Python parses it in C, where hydrating the driver's DateTime took a third of the read.
    created_at: toString(d.created_at), superseded_at: toString(d.superseded_at)
  } AS decision,
  [(d)-[:PARENT]->(parent:Decision) | parent.decision_id][0] AS parent_decision_id,
  [(d)-[r:DEPENDS_ON]->(dependency:Decision) | [r.ordinal, dependency.decision_id, toString(r.at)]] AS depends_on,
  [(dependent:Decision)-[:DEPENDS_ON]->(d) | dependent.decision_id] AS downstream_decision_ids,
  [(child:Plan)-[:SPAWNED_BY]->(d) | child.plan_id] AS downstream_plan_ids,
  [(d)-[:CORRECTS]->(original:Decision) | original.decision_id][0] AS corrects_decision_id,
  [(d)-[:SUPERSEDED_BY]->(successor:Decision) | successor.decision_id][0] AS superseded_by
