// Numbering the outbox, then: each pending run given its first number ($numbered: [element id,
// seq], in order), made an :Event (numbered seq to seq + size - 1), each plan's cursor moved to
// the last of its writes numbered ($cursors: [plan id, plan_write]; never back), and the counter
// to the last number ($last), under the lock event/pending_events took.
MATCH (counter:EventCounter {name: 'events'})
SET counter.seq = $last
WITH counter
CALL () {
  UNWIND $cursors AS cursor
  MERGE (c:EventCursor {plan_id: cursor[0]})
  SET c.numbered = CASE WHEN c.numbered > cursor[1] THEN c.numbered ELSE cursor[1] END
}
UNWIND $numbered AS numbered
MATCH (p:PendingEvent)
WHERE elementId(p) = numbered[0]
REMOVE p:PendingEvent
SET p:Event, p.seq = numbered[1], p.last_seq = numbered[1] + p.size - 1
REMOVE p.stamp, p.write, p.offset, p.size
RETURN count(p) AS numbered
