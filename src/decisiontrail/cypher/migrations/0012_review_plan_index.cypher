CREATE INDEX review_plan_status IF NOT EXISTS
FOR (r:Review) ON (r.plan_id, r.status)
