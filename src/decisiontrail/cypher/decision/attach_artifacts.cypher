// Artifacts a decision produced after it was recorded (during Execute): its artifacts_produced,
// as the caller computed them from the stored ones under the plan's lock.
MATCH (d:Decision {decision_id: $decision_id})
SET d.artifacts_produced = $artifacts_produced
