// One page of a plan's decisions in sequence order, after the cursor (a sequence number),
// with the number of all that match the filters. A null filter does not filter.
CALL () {
  MATCH (d:Decision {plan_id: $plan_id})
  WHERE ($types IS NULL OR d.decision_type IN $types)
    AND ($phases IS NULL OR d.phase IN $phases)
    AND ($current IS NULL OR $current = (d.superseded_at IS NULL))
    AND ($min_confidence IS NULL OR d.confidence_score >= $min_confidence)
    AND ($max_confidence IS NULL OR d.confidence_score <= $max_confidence)
    AND ($created_from IS NULL OR d.created_at >= $created_from)
    AND ($created_to IS NULL OR d.created_at < $created_to)
    AND ($text IS NULL OR toLower(d.question) CONTAINS $text OR toLower(d.chosen_option) CONTAINS $text)
  RETURN count(d) AS total
}
CALL () {
  MATCH (d:Decision {plan_id: $plan_id})
  WHERE ($after IS NULL OR d.sequence_number > $after)
    AND ($types IS NULL OR d.decision_type IN $types)
    AND ($phases IS NULL OR d.phase IN $phases)
    AND ($current IS NULL OR $current = (d.superseded_at IS NULL))
    AND ($min_confidence IS NULL OR d.confidence_score >= $min_confidence)
    AND ($max_confidence IS NULL OR d.confidence_score <= $max_confidence)
    AND ($created_from IS NULL OR d.created_at >= $created_from)
    AND ($created_to IS NULL OR d.created_at < $created_to)
    AND ($text IS NULL OR toLower(d.question) CONTAINS $text OR toLower(d.chosen_option) CONTAINS $text)
  WITH d ORDER BY d.sequence_number
  LIMIT $limit
  RETURN collect(d.decision_id) AS decision_ids
}
RETURN total, decision_ids
