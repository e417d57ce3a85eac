// How far each plan's announcing writes are numbered (event/number_events): one node a plan,
// merged by those numbering the outbox, under the counter's lock (writers never touch it).
CREATE CONSTRAINT event_cursor_plan_unique IF NOT EXISTS
FOR (c:EventCursor) REQUIRE c.plan_id IS UNIQUE
