// As 0020, for the reviews that hold proposals.
CREATE CONSTRAINT review_plan_idempotency_key_unique IF NOT EXISTS
FOR (r:Review) REQUIRE (r.plan_id, r.idempotency_key) IS UNIQUE
