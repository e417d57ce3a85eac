// One plan's numbered events after a cursor and up to the counter read before, in order, one row
// each (as event/read_events).
MATCH (e:Event {plan_id: $plan_id})
WHERE e.last_seq > $after AND e.last_seq <= $through
WITH e ORDER BY e.last_seq LIMIT $limit
UNWIND range(CASE WHEN e.seq > $after THEN 0 ELSE $after + 1 - e.seq END, e.last_seq - e.seq) AS i
WITH e, i LIMIT $limit
RETURN collect({
  seq: e.seq + i, kind: e.kind, plan_id: e.plan_id, decision_id: e.decision_ids[i], review_id: e.review_ids[i],
  at: toString(e.at)
}) AS events
