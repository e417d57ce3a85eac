MATCH (plan:Plan {plan_id: $plan_id})
SET plan.phase = $to_phase
CREATE (:PhaseChange {from_phase: $from_phase, to_phase: $to_phase, reason: $reason, at: $at, by: $by})-[:OF_PLAN]->(plan)
