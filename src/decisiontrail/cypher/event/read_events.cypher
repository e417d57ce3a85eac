// Events after a cursor, in order, with the counter: how far the sequence has gone, and how far it was pruned.
OPTIONAL MATCH (counter:EventCounter {name: 'events'})
CALL (counter) {
  MATCH (e:Event)
  WHERE e.seq > $after
  WITH e ORDER BY e.seq LIMIT $limit
  RETURN collect(e {.seq, .kind, .plan_id, .decision_id, .review_id, at: toString(e.at)}) AS events
}
RETURN coalesce(counter.seq, 0) AS last, coalesce(counter.pruned_through, 0) AS pruned_through, events
