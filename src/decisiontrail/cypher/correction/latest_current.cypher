// The plan's latest current decision outside the set about to be superseded (append mode's anchor).
MATCH (d:Decision {plan_id: $plan_id})
WHERE d.superseded_at IS NULL AND NOT d.decision_id IN $excluded
RETURN d.decision_id AS decision_id
ORDER BY d.sequence_number DESC
LIMIT 1
