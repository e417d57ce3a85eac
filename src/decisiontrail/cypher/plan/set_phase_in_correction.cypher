MATCH (plan:Plan {plan_id: $plan_id})
WHERE plan.phase <> $to_phase
CREATE (:PhaseChange {from_phase: plan.phase, to_phase: $to_phase, reason: $reason, at: $at, by: $by})-[:OF_PLAN]->(plan)
SET plan.phase = $to_phase
