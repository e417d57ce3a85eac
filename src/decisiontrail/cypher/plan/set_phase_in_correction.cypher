MATCH (plan:Plan {plan_id: $plan_id})
WHERE plan.phase <> $to_phase
WITH plan, COUNT { (:PhaseChange)-[:OF_PLAN]->(plan) } AS earlier
CREATE (:PhaseChange {from_phase: plan.phase, to_phase: $to_phase, reason: $reason, at: $at, by: $by, number: earlier + 1})
  -[:OF_PLAN]->(plan)
SET plan.phase = $to_phase
