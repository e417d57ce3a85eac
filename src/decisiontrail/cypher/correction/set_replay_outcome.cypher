MATCH (attempt:CorrectionAttempt {attempt_id: $attempt_id})
SET attempt.replay_outcome = $outcome, attempt.replay_detail = $detail, attempt.replayed_at = $at
RETURN attempt.attempt_id AS attempt_id
