MATCH (review:Review {review_id: $review_id})
SET review.status = $status, review.resolved_at = $resolved_at, review.resolved_option = $resolved_option,
    review.resolved_by = $resolved_by, review.approved_digest = $approved_digest
