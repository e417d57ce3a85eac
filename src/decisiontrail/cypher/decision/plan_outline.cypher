// Every decision of a plan as an outline, in sequence order: identity, type, phase, parent,
// dependencies and supersession, and nothing else (what a tree selection of ids, types and
// relations needs, without decoding whole records). The times an as-of read judges by come
// only when $as_of is given.
MATCH (d:Decision {plan_id: $plan_id})
WITH d ORDER BY d.sequence_number
RETURN d.decision_id AS decision_id,
  d.plan_id AS plan_id,
  d.sequence_number AS sequence_number,
  d.decision_type AS decision_type,
  d.phase AS phase,
  [(d)-[:PARENT]->(parent:Decision) | parent.decision_id][0] AS parent_decision_id,
  [(d)-[r:DEPENDS_ON]->(dependency:Decision) | [r.ordinal, dependency.decision_id]] AS depends_on,
  [(d)-[:SUPERSEDED_BY]->(successor:Decision) | successor.decision_id][0] AS superseded_by,
  CASE WHEN $as_of IS NULL THEN null ELSE d.created_at END AS created_at,
  CASE WHEN $as_of IS NULL THEN null ELSE d.superseded_at END AS superseded_at
