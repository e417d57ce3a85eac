// A plan's outbox runs ending after a cursor: what a subscriber that reconnects missed.
CREATE INDEX event_plan_last_seq IF NOT EXISTS
FOR (e:Event) ON (e.plan_id, e.last_seq)
