// Replaces the global or a project's set of invariants (plans instantiated later gather it).
MERGE (s:InvariantSet {key: $key})
SET s.scope = $scope, s.project = $project, s.invariants = $invariants, s.updated_at = $at, s.updated_by = $by
RETURN s.scope AS scope, s.project AS project, s.invariants AS invariants, s.updated_at AS updated_at,
  s.updated_by AS updated_by
