CREATE CONSTRAINT correction_attempt_id_unique IF NOT EXISTS
FOR (a:CorrectionAttempt) REQUIRE a.attempt_id IS UNIQUE
