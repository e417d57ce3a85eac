// Numbering the outbox (graphdb.outbox.number), first: the counter's lock (those numbering queue
// on it, writers never take it), then up to $limit pending runs (event/append_events) in the order
// they are numbered in, each as [element id, plan id, plan_write, size, stamp], for each of their
// plans how far its writes are numbered (its :EventCursor; 0 for a plan none of whose writes
// was), and Neo4j's time now.
MERGE (counter:EventCounter {name: 'events'})
  ON CREATE SET counter.seq = 0, counter.pruned_through = 0
SET counter.lock__ = true
REMOVE counter.lock__
WITH counter
// Imports the counter so the runs are read after its lock is taken (not beside it, as a product may).
CALL (counter) {
  MATCH (p:PendingEvent)
  WHERE p.stamp IS NOT NULL
  WITH p ORDER BY p.stamp, p.write, p.offset LIMIT $limit
  RETURN collect([elementId(p), p.plan_id, p.plan_write, p.size, p.stamp]) AS pending
}
CALL (pending) {
  UNWIND pending AS run
  WITH DISTINCT run[1] AS plan_id
  OPTIONAL MATCH (cursor:EventCursor {plan_id: plan_id})
  RETURN collect([plan_id, coalesce(cursor.numbered, 0)]) AS numbered
}
RETURN counter.seq AS seq, pending, numbered, datetime.realtime() AS now
