// A key names one recording within its plan; another plan may use the same key.
CREATE CONSTRAINT decision_plan_idempotency_key_unique IF NOT EXISTS
FOR (d:Decision) REQUIRE (d.plan_id, d.idempotency_key) IS UNIQUE
