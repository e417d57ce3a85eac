// The history a prune removes as of $cutoff, read in one transaction.
// Stale: a plan invalidated before the cutoff whose nearest live ancestor plan is in $phase; a
// decision superseded before the cutoff in a live plan in $phase or in a stale plan (an
// invalidated plan's own phase froze when it was invalidated, so its ancestor's decides).
// A stale record stays while anything that stays refers to it, directly or through other stale
// records (a correction's original, say: the correction CORRECTS it and correction history walks
// that edge). So no surviving decision loses its parent, a dependency, its successor or its plan,
// and no surviving plan its parent plan or spawning decision.
CALL () {
  MATCH (plan:Plan)
  WHERE plan.invalidated_at < $cutoff
  MATCH (plan) (()-[:CHILD_OF]->(above:Plan) WHERE above.invalidated_at IS NOT NULL)* ()-[:CHILD_OF]->(live:Plan)
  WHERE live.invalidated_at IS NULL AND live.phase = $phase
  RETURN collect(plan) AS stale_plans
}
CALL (stale_plans) {
  MATCH (d:Decision)-[:IN_PLAN]->(plan:Plan)
  WHERE d.superseded_at < $cutoff
    AND ((plan.phase = $phase AND plan.invalidated_at IS NULL) OR plan IN stale_plans)
  RETURN collect(d) AS stale_decisions
}
WITH stale_plans + stale_decisions AS stale
CALL (stale) {
  // Stale records a surviving decision or plan refers to, and everything stale they reach.
  UNWIND stale AS x
  MATCH (keeper)-[:PARENT|DEPENDS_ON|SUPERSEDED_BY|CORRECTS|REPLACES|IN_PLAN|CHILD_OF|SPAWNED_BY]->(x)
  WHERE NOT keeper IN stale
  WITH DISTINCT x
  // A breadth-first walk with a visited set (see decision/lineage.cypher), not one path per route.
  MATCH path = (x)-[:PARENT|DEPENDS_ON|SUPERSEDED_BY|CORRECTS|REPLACES|IN_PLAN|CHILD_OF|SPAWNED_BY*0..]->(held)
  WHERE all(n IN nodes(path) WHERE n IN stale)
  RETURN collect(DISTINCT held) AS held
}
WITH [x IN stale WHERE NOT x IN held] AS pruned
CALL (pruned) {
  UNWIND pruned AS plan
  MATCH (review:Review)-[:FOR_PLAN]->(plan:Plan)
  RETURN collect(review) AS reviews
}
CALL (pruned) {
  UNWIND pruned AS plan
  MATCH (change:PhaseChange)-[:OF_PLAN]->(plan:Plan)
  RETURN count(change) AS phase_changes
}
CALL (pruned, reviews) {
  // A context goes when every record that captured it goes (many records may share one).
  UNWIND pruned + reviews AS captor
  MATCH (captor)-[:CAPTURED]->(context:Context)
  WITH context, count(*) AS captured_by_going
  WHERE COUNT { ()-[:CAPTURED]->(context) } = captured_by_going
  RETURN count(context) AS contexts
}
CALL (pruned) {
  UNWIND pruned AS d
  MATCH (d:Decision)-[:CHECKPOINTED_IN]->(group:CheckpointGroup)
  WITH group, count(*) AS checkpointed_by_going
  WHERE COUNT { ()-[:CHECKPOINTED_IN]->(group) } = checkpointed_by_going
  RETURN count(group) AS checkpoint_groups
}
CALL (pruned) {
  // The markers of the traces whose last remaining plans are pruned (retention/delete_plans).
  UNWIND pruned AS plan
  WITH plan WHERE plan:Plan AND plan.trace_id IS NOT NULL
  WITH collect(plan.plan_id) AS plan_ids, collect(DISTINCT plan.trace_id) AS trace_ids
  UNWIND trace_ids AS trace_id
  MATCH (t:Trace {trace_id: trace_id})
  WHERE all(id IN t.plan_ids WHERE id IN plan_ids OR NOT EXISTS { MATCH (:Plan {plan_id: id}) })
  RETURN count(t) AS traces
}
RETURN
  [x IN pruned WHERE x:Decision | x.decision_id] AS decision_ids,
  [x IN pruned WHERE x:Plan | x.plan_id] AS plan_ids,
  contexts, checkpoint_groups, size(reviews) AS reviews, phase_changes, traces
