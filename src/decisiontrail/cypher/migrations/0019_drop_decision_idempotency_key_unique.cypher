// Idempotency keys are scoped to their plan (0020): the database-wide constraint goes.
DROP CONSTRAINT decision_idempotency_key_unique IF EXISTS
