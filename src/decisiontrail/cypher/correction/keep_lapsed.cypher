// The approvals a correction made lapse, kept with its attempt (found by supersede_downstream,
// rarely any): a request sent again under the attempt's key is answered with them.
MATCH (attempt:CorrectionAttempt {attempt_id: $attempt_id})
SET attempt.lapsed_review_ids = $review_ids
