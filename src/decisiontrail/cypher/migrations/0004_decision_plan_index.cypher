CREATE INDEX decision_plan_id IF NOT EXISTS
FOR (d:Decision) ON (d.plan_id)
