// How often decisions were corrected, by decision type and by actor: the decisions recorded in the
// plans the caller sees (access/_sees_plan: $owner, $project) at or after $since and before $until
// (null: unbounded) that are not themselves corrections, and how many of them a correction was made
// of (a CORRECTS into it, whenever it was made; a decision superseded only as another's downstream
// was not corrected). The actor is the plan's owner: the token that instantiated the plan, the one
// actor that records in it (a decision names no actor of its own); null for a plan made in process
// or at the command line.
CALL () {
  MATCH (plan:Plan)
  WHERE
    // include: access/_sees_plan
  MATCH (d:Decision)-[:IN_PLAN]->(plan)
  WHERE ($since IS NULL OR d.created_at >= $since) AND ($until IS NULL OR d.created_at < $until)
  WITH d WHERE NOT coalesce(d.is_correction, false)
  WITH d.decision_type AS decision_type, EXISTS { (:Decision)-[:CORRECTS]->(d) } AS corrected
  WITH decision_type, count(*) AS decisions, count(CASE WHEN corrected THEN 1 END) AS corrected
  ORDER BY decision_type
  RETURN collect({decision_type: decision_type, decisions: decisions, corrected: corrected}) AS by_type
}
CALL () {
  MATCH (plan:Plan)
  WHERE
    // include: access/_sees_plan
  MATCH (d:Decision)-[:IN_PLAN]->(plan)
  WHERE ($since IS NULL OR d.created_at >= $since) AND ($until IS NULL OR d.created_at < $until)
  WITH d, plan WHERE NOT coalesce(d.is_correction, false)
  WITH plan.owner AS actor, EXISTS { (:Decision)-[:CORRECTS]->(d) } AS corrected
  WITH actor, count(*) AS decisions, count(CASE WHEN corrected THEN 1 END) AS corrected
  ORDER BY actor
  RETURN collect({actor: actor, decisions: decisions, corrected: corrected}) AS by_actor
}
RETURN by_type, by_actor
