// Events older than the retention, a batch of stored runs at a time; the counter remembers how far
// the sequence was pruned (a run's last number).
MATCH (e:Event)
WHERE e.at < $before
WITH e ORDER BY e.last_seq LIMIT $limit
WITH collect(e) AS old, max(e.last_seq) AS through
FOREACH (e IN old | DETACH DELETE e)
WITH through WHERE through IS NOT NULL
MATCH (counter:EventCounter {name: 'events'})
SET counter.pruned_through = CASE WHEN through > counter.pruned_through THEN through ELSE counter.pruned_through END
RETURN through
