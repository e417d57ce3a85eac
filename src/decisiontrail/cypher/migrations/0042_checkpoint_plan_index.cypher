// The checkpoints of a plan, which retention deletes with it (retention/delete_plans).
CREATE INDEX checkpoint_plan IF NOT EXISTS
FOR (c:Checkpoint) ON (c.plan_id)
