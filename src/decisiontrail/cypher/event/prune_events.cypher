// Events older than the retention, a batch of stored runs at a time, from the start of the
// sequence up to the first that is not (a run numbered late, after waiting, can be older than
// runs numbered before it: pruned past those, the counter would say they are gone); the counter
// remembers how far the sequence was pruned (a run's last number).
MATCH (e:Event)
WHERE e.last_seq IS NOT NULL
WITH e ORDER BY e.last_seq LIMIT $limit
WITH collect(e) AS oldest
WITH oldest, [i IN range(0, size(oldest) - 1) WHERE NOT oldest[i].at < $before][0] AS kept
WITH CASE WHEN kept IS NULL THEN oldest ELSE oldest[..kept] END AS old
WITH old, old[-1].last_seq AS through
FOREACH (e IN old | DETACH DELETE e)
WITH through WHERE through IS NOT NULL
MATCH (counter:EventCounter {name: 'events'})
SET counter.pruned_through = CASE WHEN through > counter.pruned_through THEN through ELSE counter.pruned_through END
RETURN through
