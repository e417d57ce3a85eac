// One page of a plan's decisions in sequence order, after the cursor (a sequence number), and,
// when $count, the number of all that match the filters (else null). A null filter does not filter.
// The page is an ordered seek of decision_sequence_unique from the cursor, which stops once the
// page is full: a page costs what it holds (and what the filters pass over), not the plan's size.
// The count reads every decision of the plan; it is skipped unless asked for. $as_of, a past moment,
// keeps the decisions recorded by then and judges $current as they stood then.
CALL () {
  WITH 1 AS counted WHERE $count
  MATCH (d:Decision {plan_id: $plan_id})
  WHERE ($types IS NULL OR d.decision_type IN $types)
    AND ($phases IS NULL OR d.phase IN $phases)
    AND ($as_of IS NULL OR d.created_at <= $as_of)
    AND ($current IS NULL OR $current = (d.superseded_at IS NULL OR ($as_of IS NOT NULL AND d.superseded_at > $as_of)))
    AND ($min_confidence IS NULL OR d.confidence_score >= $min_confidence)
    AND ($max_confidence IS NULL OR d.confidence_score <= $max_confidence)
    AND ($created_from IS NULL OR d.created_at >= $created_from)
    AND ($created_to IS NULL OR d.created_at < $created_to)
    AND ($text IS NULL OR toLower(d.question) CONTAINS $text OR toLower(d.chosen_option) CONTAINS $text)
  RETURN count(d) AS total
}
CALL () {
  MATCH (d:Decision {plan_id: $plan_id})
  USING INDEX SEEK d:Decision(plan_id, sequence_number)
  WHERE d.sequence_number > coalesce($after, -1)
    AND ($types IS NULL OR d.decision_type IN $types)
    AND ($phases IS NULL OR d.phase IN $phases)
    AND ($as_of IS NULL OR d.created_at <= $as_of)
    AND ($current IS NULL OR $current = (d.superseded_at IS NULL OR ($as_of IS NOT NULL AND d.superseded_at > $as_of)))
    AND ($min_confidence IS NULL OR d.confidence_score >= $min_confidence)
    AND ($max_confidence IS NULL OR d.confidence_score <= $max_confidence)
    AND ($created_from IS NULL OR d.created_at >= $created_from)
    AND ($created_to IS NULL OR d.created_at < $created_to)
    AND ($text IS NULL OR toLower(d.question) CONTAINS $text OR toLower(d.chosen_option) CONTAINS $text)
  // Ordered by every property of the index, so the planner reads it in order and stops at the limit.
  WITH d ORDER BY d.plan_id, d.sequence_number
  LIMIT $limit
  RETURN collect(d.decision_id) AS decision_ids
}
RETURN CASE WHEN $count THEN total END AS total, decision_ids
