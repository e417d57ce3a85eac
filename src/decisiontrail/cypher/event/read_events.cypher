// Numbered events after a cursor, in order, one row each, with the counter: how far the sequence
// has gone, and how far it was pruned; and whether events wait to be numbered
// (graphdb.outbox.number). A stored run (append_events) is read from the first event past the cursor.
// Whether events wait is read first: a write committed before it is then either numbered by the
// counter read after, or waits (read before it is numbered, it would be neither).
CALL () { RETURN EXISTS { MATCH (:PendingEvent) } AS pending }
OPTIONAL MATCH (counter:EventCounter {name: 'events'})
CALL (counter) {
  MATCH (e:Event)
  WHERE e.last_seq > $after
  WITH e ORDER BY e.last_seq LIMIT $limit
  UNWIND range(CASE WHEN e.seq > $after THEN 0 ELSE $after + 1 - e.seq END, e.last_seq - e.seq) AS i
  WITH e, i LIMIT $limit
  RETURN collect({
    seq: e.seq + i, kind: e.kind, plan_id: e.plan_id, decision_id: e.decision_ids[i], review_id: e.review_ids[i],
    at: toString(e.at)
  }) AS events
}
RETURN coalesce(counter.seq, 0) AS last, coalesce(counter.pruned_through, 0) AS pruned_through, events, pending
