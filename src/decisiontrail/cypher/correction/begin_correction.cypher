// A correction's reads, in one statement. Locks the decision to correct and its plan (its
// :PlanLock: recordings into the plan wait; of two concurrent corrections the second reads the
// first's), walks its downstream for the plans it touches and locks those too (in plan-id order,
// as a batch of recordings does), then walks the downstream again under the locks and reads it
// whole: nothing recorded into a locked plan can escape it. When the first walk touched no plan
// but the decision's own, it was already made under every lock the correction takes and is read
// as it is (a second walk would find the same: at 10,000 decisions it was half the reads).
// What the rules need comes back with it: the decision whole (the columns of
// decision/get_decisions), its correction chain, its plan's phase, the reviews pending in the
// locked plans (and the dependencies of those pending elsewhere), and the downstream summarised
// (below), not a row per decision. The plans the second walk
// reached are returned too: one not locked yet (reached through something recorded between the
// walks) makes the caller run this statement again, its first walk then made under the locks
// already held. Both walks are breadth-first with a visited set (see decision/lineage.cypher):
// keep the predicate over all nodes(path) and the DISTINCT collect.
// It reads too what placing the correction decision ($correction_id, the id it will have) is
// judged by (domain.placement: decision/read_placements reads the same for any recording, where
// a correction would pay a round trip of its own for it): the plan's counter, automation profile
// and current root, and the decision the correction hangs under in either mode (the decision's
// parent: domain.correction.correction_parent).
// The decision and the correction's id are looked up by seeks, hinted: planned on a fresh
// database's statistics, the decision's lookup was seen scanning the id index and filtering (a
// plan the planner may keep while the database grows).
MATCH (d:Decision {decision_id: $decision_id})-[:IN_PLAN]->(plan:Plan)
USING INDEX SEEK d:Decision(decision_id)
SET d.lock__ = true
REMOVE d.lock__
MERGE (lock:PlanLock {plan_id: plan.plan_id})
FOREACH (taken IN CASE WHEN lock.holder = $holder THEN [] ELSE [1] END |
  SET lock.writes = coalesce(lock.writes, 0) + 1, lock.holder = $holder)
WITH d, plan
// Memory stays linear in the downstream: no aggregation below groups its rows by a list it
// imports. An aggregation (or DISTINCT) inside a subquery is grouped by the variables it imports
// too, each group holding its own copy of them: a summary per plan of the downstream's rows, each
// group keeping the rows whole, made a correction across N levels of plans take memory in N
// squared (800 decisions under 200 levels went past 256 MiB). Lists are made distinct where
// they are made, and the downstream is returned as rows that graphdb.corrections summarises.
CALL (d) {
  OPTIONAL MATCH path = (d)<-[:PARENT|DEPENDS_ON|SPAWNED_BY|IN_PLAN*]-(reached)
  WHERE all(n IN nodes(path) WHERE n = d OR (n.superseded_at IS NULL AND n.invalidated_at IS NULL))
  WITH collect(DISTINCT reached) AS reached
  // One group (the walk's list), however many plans: [null] keeps a row when nothing was reached.
  UNWIND CASE WHEN reached = [] THEN [null] ELSE reached END AS x
  WITH reached, collect(DISTINCT x.plan_id) AS ids
  RETURN reached AS first_reached,
    // With the plans the caller asks for too ($also_lock, distinct: where reviews wait on the downstream).
    ids + [id IN $also_lock WHERE NOT id IN ids] AS touched_plan_ids
}
CALL (plan, touched_plan_ids) {
  UNWIND touched_plan_ids AS plan_id
  WITH plan_id WHERE plan_id <> plan.plan_id
  WITH plan_id ORDER BY plan_id
  MATCH (:Plan {plan_id: plan_id})
  MERGE (touched:PlanLock {plan_id: plan_id})
  FOREACH (taken IN CASE WHEN touched.holder = $holder THEN [] ELSE [1] END |
    SET touched.writes = coalesce(touched.writes, 0) + 1, touched.holder = $holder)
  RETURN count(*) AS touched_locked
}
OPTIONAL CALL (d, plan, touched_plan_ids) {
  WITH d WHERE any(id IN touched_plan_ids WHERE id <> plan.plan_id)
  OPTIONAL MATCH path = (d)<-[:PARENT|DEPENDS_ON|SPAWNED_BY|IN_PLAN*]-(reached)
  WHERE all(n IN nodes(path) WHERE n = d OR (n.superseded_at IS NULL AND n.invalidated_at IS NULL))
  // Grouped by d: no row (so null) when the walk is not made.
  RETURN d AS walked_again, collect(DISTINCT reached) AS reached_again
}
WITH d, plan, touched_plan_ids, touched_locked, coalesce(reached_again, first_reached) AS reached
WITH d, plan, touched_plan_ids, touched_locked,
  [x IN reached WHERE x:Decision] AS downstream,
  [x IN reached WHERE x:Plan | x.plan_id] AS plan_ids
WITH d, plan, touched_locked, downstream, plan_ids, [plan.plan_id] + [id IN touched_plan_ids WHERE id <> plan.plan_id] AS locked_plan_ids
// The downstream read once, in plan and sequence order, for every summary below: a row per
// decision of [plan, number, id, type, its actor run if it has a checkpoint]. One map projection
// reads a decision's properties in one pass; read one by one, by each summary, they were a
// third of this statement at 10,000 decisions.
WITH d, plan, touched_locked, downstream, plan_ids, locked_plan_ids, COLLECT {
    UNWIND downstream AS x
    WITH x {
      .plan_id, .sequence_number, .decision_id, .decision_type, .phase,
      .actor_state_thread_id, .actor_state_checkpoint_ns, .actor_state_checkpoint_id
    } AS m
    WITH m.plan_id AS plan_id, m.sequence_number AS number, m.decision_id AS id, m.decision_type AS type, m
    ORDER BY plan_id, number
    // A decision with a checkpoint names its actor run (thread) and where replay would start.
    RETURN CASE WHEN m.actor_state_checkpoint_id IS NULL THEN [plan_id, number, id, type]
      ELSE [plan_id, number, id, type, m.actor_state_thread_id, m.phase, m.actor_state_checkpoint_ns, m.actor_state_checkpoint_id]
    END
  } AS rows
RETURN
  plan.phase AS plan_phase,
  locked_plan_ids,
  // The downstream, a row per decision in plan and sequence order (graphdb.corrections._downstream
  // summarises it: each plan's decision ids, the count of each type, each actor run's earliest
  // decision with a checkpoint, where replay starts).
  rows,
  plan_ids,
  COLLECT {
    UNWIND locked_plan_ids AS plan_id
    MATCH (review:Review {plan_id: plan_id})
    WHERE review.status = 'pending'
    WITH review ORDER BY review.created_at, review.review_id
    RETURN review {.*}
  } AS pending_reviews,
  // Reviews pending outside the locked plans whose proposals depend on other decisions, with
  // those: the caller judges which wait on the downstream, and locks their plans in another round.
  COLLECT {
    MATCH (review:Review {status: 'pending'})
    USING INDEX SEEK review:Review(status)
    WHERE size(coalesce(review.depends_on_ids, [])) > 0 AND NOT review.plan_id IN locked_plan_ids
    RETURN [review.plan_id, review.depends_on_ids]
  } AS waiting,
  // Placing the correction (the columns of decision/read_placements' facts it needs).
  plan.next_sequence AS next_sequence,
  plan.automation_edit_code AS automation_edit_code,
  plan.automation_execute_command AS automation_execute_command,
  COLLECT {
    MATCH (root:Decision {plan_id: plan.plan_id, decision_type: 'prompt_definition'})
    USING INDEX SEEK root:Decision(plan_id, decision_type, sequence_number)
    WHERE root.sequence_number IS NOT NULL AND NOT EXISTS { (root)-[:SUPERSEDED_BY]->() }
    RETURN root.decision_id
  }[0] AS current_root_id,
  EXISTS { MATCH (taken:Decision {decision_id: $correction_id}) USING INDEX SEEK taken:Decision(decision_id) } AS correction_exists,
  [(d)-[:PARENT]->(parent:Decision) | [parent.decision_id, parent.plan_id, EXISTS { (parent)-[:SUPERSEDED_BY]->() }]] AS parents,
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
  [(d)-[r:DEPENDS_ON]->(dependency:Decision) | [r.ordinal, dependency.decision_id, toString(r.at)]] AS depends_on,
  [(dependent:Decision)-[:DEPENDS_ON]->(d) | dependent.decision_id] AS downstream_decision_ids,
  [(child:Plan)-[:SPAWNED_BY]->(d) | child.plan_id] AS downstream_plan_ids,
  [(d)-[:CORRECTS]->(original:Decision) | original.decision_id][0] AS corrects_decision_id,
  [(d)-[:SUPERSEDED_BY]->(successor:Decision) | successor.decision_id][0] AS superseded_by
