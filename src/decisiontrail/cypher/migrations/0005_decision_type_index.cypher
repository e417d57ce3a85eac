CREATE INDEX decision_type IF NOT EXISTS
FOR (d:Decision) ON (d.decision_type)
