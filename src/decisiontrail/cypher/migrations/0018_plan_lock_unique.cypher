// A plan's write lock is its :PlanLock node (see decision/read_placements), made on first use by
// MERGE: unique, so two writers into a new plan make one.
CREATE CONSTRAINT plan_lock_unique IF NOT EXISTS FOR (lock:PlanLock) REQUIRE lock.plan_id IS UNIQUE
