// How long reviews waited for a person: of the reviews created at or after $since and before $until
// in the plans the caller sees (access/_sees_plan), each resolved one's wait (created to resolved; an
// approval that lapsed later was resolved all the same; a review a correction cancelled was never
// answered by a person and counts in neither) and each pending one's age (created to now), in
// seconds; their percentiles (percentileCont: interpolated), and how many fall in each bucket of
// $bounds (ascending upper bounds in seconds; bucket i holds waits below $bounds[i] and at least the
// bound before it, the last bucket those at or past every bound).
MATCH (plan:Plan)
WHERE
  // include: access/_sees_plan
MATCH (r:Review)-[:FOR_PLAN]->(plan)
WHERE ($since IS NULL OR r.created_at >= $since) AND ($until IS NULL OR r.created_at < $until)
  AND (r.status = 'pending' OR (r.status <> 'cancelled' AND r.resolved_at IS NOT NULL))
WITH r.status = 'pending' AS pending,
     duration.inSeconds(r.created_at, CASE WHEN r.status = 'pending' THEN datetime() ELSE r.resolved_at END) AS waited
WITH pending, waited.seconds + waited.nanosecondsOfSecond / 1000000000.0 AS seconds
WITH pending, seconds, size([bound IN $bounds WHERE bound <= seconds]) AS bucket
WITH collect({pending: pending, seconds: seconds, bucket: bucket}) AS waits
WITH [w IN waits WHERE NOT w.pending | w] AS resolved, [w IN waits WHERE w.pending | w] AS pending
CALL (resolved) {
  UNWIND resolved AS w
  RETURN percentileCont(w.seconds, 0.5) AS median, percentileCont(w.seconds, 0.9) AS p90, max(w.seconds) AS longest
}
CALL (pending) {
  UNWIND pending AS w
  RETURN max(w.seconds) AS oldest_pending
}
RETURN
  size(resolved) AS resolved,
  size(pending) AS pending,
  median,
  p90,
  longest,
  oldest_pending,
  [i IN range(0, size($bounds)) | {
    resolved: size([w IN resolved WHERE w.bucket = i]),
    pending: size([w IN pending WHERE w.bucket = i])
  }] AS buckets
