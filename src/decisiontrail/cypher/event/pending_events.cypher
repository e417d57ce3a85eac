// Numbering the outbox (graphdb.outbox.number), first: the counter's lock (those numbering queue
// on it, writers never take it), then up to $limit pending runs (event/append_events) in the order
// they are numbered in, each as [element id, plan id, plan_write, size], and for each of their
// plans the plan_write of its last numbered run (no row for a plan without one, or whose runs
// were all pruned; null for a run numbered before runs were counted by plan).
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
  RETURN collect([elementId(p), p.plan_id, p.plan_write, p.size]) AS pending
}
CALL (pending) {
  UNWIND pending AS run
  WITH DISTINCT run[1] AS plan_id
  CALL (plan_id) {
    MATCH (e:Event {plan_id: plan_id})
    WHERE e.last_seq IS NOT NULL
    RETURN e.plan_write AS plan_write ORDER BY e.last_seq DESC LIMIT 1
  }
  RETURN collect([plan_id, plan_write]) AS numbered
}
RETURN counter.seq AS seq, pending, numbered
