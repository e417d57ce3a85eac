// Tokens limited to a project list and page only that project's plans: without this index
// every such page scanned all plans.
CREATE INDEX plan_project IF NOT EXISTS
FOR (p:Plan) ON (p.project)
