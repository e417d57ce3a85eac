// Events older than the retention, a batch at a time; the counter remembers how far the sequence was pruned.
MATCH (e:Event)
WHERE e.at < $before
WITH e ORDER BY e.seq LIMIT $limit
WITH collect(e) AS old, max(e.seq) AS through
FOREACH (e IN old | DETACH DELETE e)
WITH through WHERE through IS NOT NULL
MATCH (counter:EventCounter {name: 'events'})
SET counter.pruned_through = CASE WHEN through > counter.pruned_through THEN through ELSE counter.pruned_through END
RETURN through
