// An outbox event by its sequence number: what relays read after their cursor.
CREATE CONSTRAINT event_seq_unique IF NOT EXISTS
FOR (e:Event) REQUIRE e.seq IS UNIQUE
