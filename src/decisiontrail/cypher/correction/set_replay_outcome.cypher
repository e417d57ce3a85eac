// Records how a correction's replay went, and the decisions it recorded. The caller rolls the
// transaction back when some of those decisions do not exist (``missing``).
MATCH (attempt:CorrectionAttempt {attempt_id: $attempt_id})
SET attempt.replay_outcome = $outcome, attempt.replay_detail = $detail, attempt.replayed_at = $at,
    attempt.replayed_decision_ids = $decision_ids
RETURN attempt {.*} AS attempt,
  [id IN $decision_ids WHERE NOT EXISTS { MATCH (:Decision {decision_id: id}) }] AS missing
