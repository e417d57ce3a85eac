// A plan's events after a cursor: what a subscriber that reconnects missed.
CREATE INDEX event_plan_seq IF NOT EXISTS
FOR (e:Event) ON (e.plan_id, e.seq)
