// A correction sent again under its idempotency key finds the attempt the first one made
// (correction/attempt_by_key) without reading every attempt.
CREATE INDEX correction_attempt_idempotency_key IF NOT EXISTS
FOR (a:CorrectionAttempt) ON (a.idempotency_key)
