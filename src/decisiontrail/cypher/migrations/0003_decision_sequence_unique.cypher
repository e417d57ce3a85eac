// Sequence numbers are allocated under the plan's lock; this constraint is the backstop.
CREATE CONSTRAINT decision_sequence_unique IF NOT EXISTS
FOR (d:Decision) REQUIRE (d.plan_id, d.sequence_number) IS UNIQUE
