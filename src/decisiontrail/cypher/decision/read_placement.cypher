// Takes the plan's write lock by allocating the next sequence number, then reads the
// facts check_decision_placement judges. Everything here runs under that lock, so two
// writers into one plan never see the same state.
OPTIONAL MATCH (plan:Plan {plan_id: $plan_id})
SET plan.next_sequence = plan.next_sequence + 1
WITH plan
CALL () {
  // Only a new prompt_definition needs to know the current root.
  OPTIONAL MATCH (root:Decision {plan_id: $plan_id, decision_type: 'prompt_definition'})
  WHERE $decision_type = 'prompt_definition' AND NOT EXISTS { (root)-[:SUPERSEDED_BY]->() }
  RETURN collect(root.decision_id)[0] AS current_root_id
}
OPTIONAL MATCH (parent:Decision {decision_id: $parent_decision_id})
RETURN
  plan IS NOT NULL AS plan_exists,
  plan.next_sequence - 1 AS sequence_number,
  EXISTS { MATCH (:Decision {decision_id: $decision_id}) } AS decision_exists,
  current_root_id,
  parent IS NOT NULL AS parent_exists,
  parent.plan_id AS parent_plan_id,
  parent IS NOT NULL AND EXISTS { (parent)-[:SUPERSEDED_BY]->() } AS parent_superseded,
  [id IN $depends_on WHERE NOT EXISTS { MATCH (:Decision {decision_id: id}) }] AS missing_dependencies,
  [id IN $depends_on WHERE EXISTS { MATCH (:Decision {decision_id: id})-[:SUPERSEDED_BY]->() }] AS superseded_dependencies,
  EXISTS { MATCH (:Decision {decision_id: $corrects_decision_id}) } AS corrected_exists
