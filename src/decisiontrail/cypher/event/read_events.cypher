// Numbered events after a cursor ($after) and up to the counter read before ($through:
// event/read_counter), in order, one row each. Every event up to the counter was committed before
// it was read (numbering is serial, under the counter's lock), so these are all of them; those
// numbered since are left to the next read. A stored run (append_events) is read from the first
// event past the cursor, and a numbering's runs all end at or before the counter it set.
MATCH (e:Event)
WHERE e.last_seq > $after AND e.last_seq <= $through
WITH e ORDER BY e.last_seq LIMIT $limit
UNWIND range(CASE WHEN e.seq > $after THEN 0 ELSE $after + 1 - e.seq END, e.last_seq - e.seq) AS i
WITH e, i LIMIT $limit
RETURN collect({
  seq: e.seq + i, kind: e.kind, plan_id: e.plan_id, decision_id: e.decision_ids[i], review_id: e.review_ids[i],
  at: toString(e.at)
}) AS events
