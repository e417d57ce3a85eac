// The trends page's first plot: per UTC day, the decisions recorded in the plans the caller sees
// (access/_sees_plan: $owner, $project) at or after $since and before $until (null: unbounded), and
// the corrections among them (a correction decision, is_correction: one per correction attempt). Days
// without a decision are not returned (services.trends fills them in).
MATCH (plan:Plan)
WHERE
  // include: access/_sees_plan
MATCH (d:Decision)-[:IN_PLAN]->(plan)
WHERE ($since IS NULL OR d.created_at >= $since) AND ($until IS NULL OR d.created_at < $until)
WITH date(d.created_at) AS day, coalesce(d.is_correction, false) AS is_correction
RETURN toString(day) AS day,
       count(CASE WHEN NOT is_correction THEN 1 END) AS decisions,
       count(CASE WHEN is_correction THEN 1 END) AS corrections
ORDER BY day
