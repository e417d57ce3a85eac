MATCH (plan:Plan {plan_id: $plan_id})
SET plan.phase = $to_phase
WITH plan, COUNT { (:PhaseChange)-[:OF_PLAN]->(plan) } AS earlier
// numbered, so changes recorded at the same moment (an import's, at a span's start) keep their order
CREATE (:PhaseChange {from_phase: $from_phase, to_phase: $to_phase, reason: $reason, at: $at, by: $by, number: earlier + 1})
  -[:OF_PLAN]->(plan)
