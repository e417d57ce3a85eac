// The confidence of corrected decisions against kept ones, in buckets of 0.1 (bucket i holds scores
// in [i/10, (i+1)/10); the last holds 1.0 too): among the decisions recorded in the plans the caller
// sees (access/_sees_plan: $owner, $project) at or after $since and before $until (null: unbounded),
// not themselves corrections, that carry a score, those a correction was made of and those still
// current (kept). A decision superseded only as another's downstream is neither. Empty buckets are
// not returned (services.trends fills them in).
MATCH (plan:Plan)
WHERE
  // include: access/_sees_plan
MATCH (d:Decision)-[:IN_PLAN]->(plan)
WHERE ($since IS NULL OR d.created_at >= $since) AND ($until IS NULL OR d.created_at < $until)
WITH d WHERE NOT coalesce(d.is_correction, false) AND d.confidence_score IS NOT NULL
WITH d, EXISTS { (:Decision)-[:CORRECTS]->(d) } AS corrected, toInteger(floor(d.confidence_score * 10)) AS bucket
WITH CASE WHEN bucket > 9 THEN 9 ELSE bucket END AS bucket, corrected, d.superseded_at IS NULL AS kept
RETURN bucket, count(CASE WHEN corrected THEN 1 END) AS corrected, count(CASE WHEN kept THEN 1 END) AS kept
ORDER BY bucket
