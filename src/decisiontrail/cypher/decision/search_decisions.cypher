// Decisions found across plans, best first, after the cursor (the last hit of the page before: by
// id or not, score, id), and, when $count, how many are found (else null). Found by id ($decision_id,
// the text as a ULID: a unique index seek) and by words ($lucene, built by domain.pages.lucene_query:
// the decision_text full-text index over question, chosen option and rationale); ranked by id first,
// then by Lucene's score, then by id. Superseded decisions are found too. Visibility is
// access/_sees_plan, judged here on each hit's plan, so neither the page nor the count tells of a plan
// the caller may not see.
// Cost: the index answers every hit of the words (Lucene ranks them all), each matched to its plan and
// judged as it streams by; the page keeps the best $limit (a top-k sort, holding $limit rows), so a
// page costs what the words match, not what it holds: a word most decisions hold reads most of them.
// The count reads the hits again, and is skipped unless asked for. A score is recomputed per request:
// a decision recorded between two pages may move what ranks where.
CALL () {
  WITH 1 AS counted WHERE $count
  CALL () {
    MATCH (d:Decision {decision_id: $decision_id})
    RETURN d
    UNION ALL
    WITH 1 AS by_words WHERE $lucene IS NOT NULL
    CALL db.index.fulltext.queryNodes('decision_text', $lucene) YIELD node
    WITH node WHERE $decision_id IS NULL OR node.decision_id <> $decision_id
    RETURN node AS d
  }
  MATCH (d)-[:IN_PLAN]->(plan:Plan)
  WHERE ($plan_id IS NULL OR plan.plan_id = $plan_id)
    AND
    // include: access/_sees_plan
  RETURN count(d) AS total
}
CALL () {
  CALL () {
    MATCH (d:Decision {decision_id: $decision_id})
    RETURN d, 1 AS exact, 0.0 AS score
    UNION ALL
    WITH 1 AS by_words WHERE $lucene IS NOT NULL
    CALL db.index.fulltext.queryNodes('decision_text', $lucene) YIELD node, score
    // Found by its id, it is ranked as found so; the hits stream on, never grouped.
    WITH node, score WHERE $decision_id IS NULL OR node.decision_id <> $decision_id
    RETURN node AS d, 0 AS exact, score
  }
  WITH d, exact, score
  WHERE $after_id IS NULL
     OR exact < $after_exact
     OR (exact = $after_exact AND (score < $after_score OR (score = $after_score AND d.decision_id > $after_id)))
  MATCH (d)-[:IN_PLAN]->(plan:Plan)
  WHERE ($plan_id IS NULL OR plan.plan_id = $plan_id)
    AND
    // include: access/_sees_plan
  WITH d, exact, score ORDER BY exact DESC, score DESC, d.decision_id
  LIMIT $limit
  RETURN collect({decision_id: d.decision_id, exact: exact = 1, score: score}) AS hits
}
RETURN CASE WHEN $count THEN total END AS total, hits
