// For each decision, in the order given, every attempt on the correction chain it belongs to,
// oldest first (a decision unknown: none). One statement for a request's decisions.
UNWIND range(0, size($decision_ids) - 1) AS i
CALL (i) {
  MATCH (d:Decision {decision_id: $decision_ids[i]})
  MATCH (d)-[:CORRECTS|REPLACES*0..]->(first:Decision)
  WHERE NOT EXISTS { (first)-[:CORRECTS|REPLACES]->() }
  MATCH (attempt:CorrectionAttempt {original_decision_id: first.decision_id})
  WITH attempt
  ORDER BY attempt.attempt_number
  RETURN collect(attempt {.*}) AS attempts
}
RETURN attempts
ORDER BY i
