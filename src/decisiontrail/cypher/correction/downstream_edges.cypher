// The edges leaving each given decision or plan (PARENT, DEPENDS_ON, SPAWNED_BY, IN_PLAN: from the
// dependent end to what it hangs on), so a downstream walk already made can be explained: which
// edge brought the walk to each record.
UNWIND $ids AS id
CALL (id) {
  OPTIONAL MATCH (d:Decision {decision_id: id})
  OPTIONAL MATCH (p:Plan {plan_id: id})
  WITH coalesce(d, p) AS n
  WHERE n IS NOT NULL
  MATCH (n)-[r:PARENT|DEPENDS_ON|SPAWNED_BY|IN_PLAN]->(m)
  RETURN type(r) AS relationship, coalesce(m.decision_id, m.plan_id) AS to_id
}
RETURN id AS from_id, relationship, to_id
