// A trace sent over OTLP: its node is the lock concurrent imports of it take, and says when it was imported.
CREATE CONSTRAINT trace_id_unique IF NOT EXISTS
FOR (t:Trace) REQUIRE t.trace_id IS UNIQUE
