// Reading the outbox (graphdb.outbox.read_after), first: whether events wait to be numbered
// (graphdb.outbox.number), then how far the sequence has gone and how far it was pruned. Whether
// events wait is read first: a write committed before it is then either numbered by the counter
// read after, or waits (read before it is numbered, it would be neither). The counter's properties
// are read by the RETURN, after the subquery.
// The events are read by a statement of their own, after this one (event/read_events): in one
// statement the counter's properties were read when the RETURN ran, after the events, and Neo4j
// reads committed, not a snapshot, so numbering committed meanwhile could put the counter past
// events the read had passed by (a reader told "up to here" would skip them).
CALL () { RETURN EXISTS { MATCH (:PendingEvent) } AS pending }
OPTIONAL MATCH (counter:EventCounter {name: 'events'})
RETURN coalesce(counter.seq, 0) AS last, coalesce(counter.pruned_through, 0) AS pruned_through, pending
