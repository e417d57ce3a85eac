// Every decision of a plan as an outline, in sequence order: identity, type, phase, parent,
// dependencies and supersession, and nothing else (what a tree selection of ids, types and
// relations needs, without decoding whole records). The times an as-of read judges by come
// only when $as_of is given. One row holding the list: the driver decodes one value, where a
// row per decision cost a record, and a lookup per column, each.
MATCH (d:Decision {plan_id: $plan_id})
WITH d ORDER BY d.sequence_number
RETURN collect(d {
  .decision_id, .plan_id, .sequence_number, .decision_type, .phase,
  parent_decision_id: [(d)-[:PARENT]->(parent:Decision) | parent.decision_id][0],
  depends_on: [(d)-[r:DEPENDS_ON]->(dependency:Decision) | [r.ordinal, dependency.decision_id]],
  superseded_by: [(d)-[:SUPERSEDED_BY]->(successor:Decision) | successor.decision_id][0],
  created_at: CASE WHEN $as_of IS NULL THEN null ELSE d.created_at END,
  superseded_at: CASE WHEN $as_of IS NULL THEN null ELSE d.superseded_at END
}) AS outlines
