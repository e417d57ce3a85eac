// Runs by id, in any order (the mapper orders them).
UNWIND $run_ids AS run_id
MATCH (run:PlanRun {run_id: run_id})
RETURN run
