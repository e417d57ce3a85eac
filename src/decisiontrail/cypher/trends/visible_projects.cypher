// The projects the trends page offers: every project of a plan the caller sees (access/_sees_plan:
// $owner, and $project, the one a limited token is held to), in name order.
MATCH (plan:Plan)
WHERE plan.project IS NOT NULL AND
  // include: access/_sees_plan
RETURN DISTINCT plan.project AS project
ORDER BY project
