MATCH (change:PhaseChange)-[:OF_PLAN]->(:Plan {plan_id: $plan_id})
RETURN change.from_phase AS from_phase, change.to_phase AS to_phase, change.reason AS reason, change.at AS at,
  change.by AS by
ORDER BY change.at, change.number
