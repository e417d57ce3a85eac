// For each plan, in the order given, its phase changes, oldest first (none for an unknown plan).
UNWIND range(0, size($plan_ids) - 1) AS i
CALL (i) {
  OPTIONAL MATCH (change:PhaseChange)-[:OF_PLAN]->(:Plan {plan_id: $plan_ids[i]})
  WITH change
  ORDER BY change.at, change.number
  RETURN collect(change {.from_phase, .to_phase, .reason, .at, .by}) AS changes
}
RETURN changes
ORDER BY i
