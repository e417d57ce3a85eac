// Numbering the outbox, then: each pending run given its first number ($numbered: [element id,
// seq], in order), made an :Event (numbered seq to seq + size - 1), and the counter moved to the
// last ($last), under the lock event/pending_events took.
MATCH (counter:EventCounter {name: 'events'})
SET counter.seq = $last
WITH counter
UNWIND $numbered AS numbered
MATCH (p:PendingEvent)
WHERE elementId(p) = numbered[0]
REMOVE p:PendingEvent
SET p:Event, p.seq = numbered[1], p.last_seq = numbered[1] + p.size - 1
REMOVE p.stamp, p.write, p.offset, p.size
RETURN count(p) AS numbered
