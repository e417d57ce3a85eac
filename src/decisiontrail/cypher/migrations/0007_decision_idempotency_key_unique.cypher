CREATE CONSTRAINT decision_idempotency_key_unique IF NOT EXISTS
FOR (d:Decision) REQUIRE d.idempotency_key IS UNIQUE
