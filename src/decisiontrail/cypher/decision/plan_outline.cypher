// Every decision of a plan as an outline, in sequence order: identity, type, phase, parent,
// dependencies and supersession, and nothing else (what a tree selection of ids, types and
// relations needs, without decoding whole records; the plan id is the caller's own). One row
// holding the list: the driver decodes one value, where a row per decision cost a record, and a
// lookup per column, each. The times an as-of read judges by come beside it, in the same order,
// only when $as_of is given (as keys of every outline they cost a decoded null each).
MATCH (d:Decision {plan_id: $plan_id})
WITH d ORDER BY d.sequence_number
WITH collect(d) AS decisions
// Each outline a list, in the order graphdb.records.decision_outline_from_record unpacks it: a
// map's keys are decoded again for every decision.
RETURN [d IN decisions | [
  d.decision_id, d.sequence_number, d.decision_type, d.phase,
  [(d)-[:PARENT]->(parent:Decision) | parent.decision_id][0],
  [(d)-[r:DEPENDS_ON]->(dependency:Decision) | [r.ordinal, dependency.decision_id, toString(r.at)]],
  [(d)-[:SUPERSEDED_BY]->(successor:Decision) | successor.decision_id][0]
]] AS outlines,
CASE WHEN $as_of IS NULL THEN [] ELSE [d IN decisions | [d.created_at, d.superseded_at]] END AS times
