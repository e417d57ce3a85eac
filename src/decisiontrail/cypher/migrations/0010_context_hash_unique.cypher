CREATE CONSTRAINT context_hash_unique IF NOT EXISTS
FOR (c:Context) REQUIRE c.context_hash IS UNIQUE
