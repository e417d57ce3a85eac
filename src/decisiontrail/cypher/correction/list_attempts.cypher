// Every attempt on the correction chain the decision belongs to, oldest first.
MATCH (d:Decision {decision_id: $decision_id})
MATCH (d)-[:CORRECTS|REPLACES*0..]->(first:Decision)
WHERE NOT EXISTS { (first)-[:CORRECTS|REPLACES]->() }
MATCH (attempt:CorrectionAttempt {original_decision_id: first.decision_id})
RETURN attempt {.*} AS attempt
ORDER BY attempt.attempt_number
