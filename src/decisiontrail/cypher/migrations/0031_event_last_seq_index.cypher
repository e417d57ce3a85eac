// Outbox runs ending after a cursor, in order: what relays read.
CREATE INDEX event_last_seq IF NOT EXISTS
FOR (e:Event) ON (e.last_seq)
