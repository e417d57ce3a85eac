// The outbox stores runs of events (event/append_events): an event stored alone before is a run of one.
// In batches, as the outbox may hold a week of events; finds nothing left to do on a second run.
MATCH (e:Event)
WHERE e.last_seq IS NULL
CALL (e) {
  SET e.last_seq = e.seq,
      e.decision_ids = CASE WHEN e.decision_id IS NULL THEN null ELSE [e.decision_id] END,
      e.review_ids = CASE WHEN e.review_id IS NULL THEN null ELSE [e.review_id] END
  REMOVE e.decision_id, e.review_id
} IN TRANSACTIONS OF 10000 ROWS
