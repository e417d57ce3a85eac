// What ties plans together for the offline checks: each plan with the plan it is a child of
// (null for a hierarchy's top), and each pair of plans a PARENT or DEPENDS_ON edge crosses
// between (only broken data has a PARENT across plans; a DEPENDS_ON across hierarchies is
// influence). Plans joined by neither can be loaded and checked apart.
CALL () {
  MATCH (p:Plan)
  OPTIONAL MATCH (p)-[:CHILD_OF]->(parent:Plan)
  RETURN collect([p.plan_id, parent.plan_id]) AS parents
}
CALL () {
  MATCH (d:Decision)-[:PARENT|DEPENDS_ON]->(e:Decision)
  WHERE d.plan_id <> e.plan_id
  RETURN collect(DISTINCT [d.plan_id, e.plan_id]) AS crossings
}
RETURN parents, crossings
