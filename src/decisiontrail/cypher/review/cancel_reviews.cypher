// Cancels reviews a correction made moot, naming the correction. Their idempotency keys are
// retired, so a replay that reaches the same step records anew instead of finding them.
UNWIND $review_ids AS review_id
MATCH (review:Review {review_id: review_id})
WHERE review.status = 'pending'
SET review.status = 'cancelled', review.resolved_at = $at, review.cancelled_by = $correction_id,
    review.retired_idempotency_key = review.idempotency_key
REMOVE review.idempotency_key
RETURN count(review) AS cancelled
