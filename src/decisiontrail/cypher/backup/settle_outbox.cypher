// A restored outbox's counter is at least its last numbered event: a dump taken while events were
// numbered (graphdb.outbox.number) can hold the counter as it was before them, and the next
// numbers would repeat theirs.
OPTIONAL MATCH (e:Event)
WITH max(e.last_seq) AS top
WHERE top IS NOT NULL
MERGE (counter:EventCounter {name: 'events'})
  ON CREATE SET counter.seq = 0, counter.pruned_through = 0
WITH counter, top
WHERE top > counter.seq
SET counter.seq = top
