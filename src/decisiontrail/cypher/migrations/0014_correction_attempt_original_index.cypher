CREATE INDEX correction_attempt_original IF NOT EXISTS
FOR (a:CorrectionAttempt) ON (a.original_decision_id)
