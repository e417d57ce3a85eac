// A plan run is found by its id (services.runs), unique.
CREATE CONSTRAINT plan_run_id_unique IF NOT EXISTS FOR (run:PlanRun) REQUIRE run.run_id IS UNIQUE
