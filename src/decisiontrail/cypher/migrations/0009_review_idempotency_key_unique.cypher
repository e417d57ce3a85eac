CREATE CONSTRAINT review_idempotency_key_unique IF NOT EXISTS
FOR (r:Review) REQUIRE r.idempotency_key IS UNIQUE
