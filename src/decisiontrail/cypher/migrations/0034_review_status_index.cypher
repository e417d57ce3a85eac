// Pending reviews found by their status alone, in any plan: a correction looks for those whose
// proposal depends on a decision it supersedes (review_plan_status needs the plan first).
CREATE INDEX review_status IF NOT EXISTS
FOR (r:Review) ON (r.status)
