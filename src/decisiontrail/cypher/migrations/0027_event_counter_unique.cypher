// The outbox's counter: one node, merged by every write that publishes events, which is the lock that
// gives events their sequence numbers in commit order.
CREATE CONSTRAINT event_counter_unique IF NOT EXISTS
FOR (c:EventCounter) REQUIRE c.name IS UNIQUE
