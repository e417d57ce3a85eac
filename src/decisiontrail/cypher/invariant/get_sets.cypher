// The global set and, when $project is given, that project's set; absent sets are not returned.
MATCH (s:InvariantSet)
WHERE s.key = 'global' OR ($project IS NOT NULL AND s.key = 'project:' + $project)
RETURN s.scope AS scope, s.project AS project, s.invariants AS invariants, s.updated_at AS updated_at,
  s.updated_by AS updated_by
