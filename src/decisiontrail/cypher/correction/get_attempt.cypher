MATCH (attempt:CorrectionAttempt {attempt_id: $attempt_id})
RETURN attempt {.*} AS attempt
