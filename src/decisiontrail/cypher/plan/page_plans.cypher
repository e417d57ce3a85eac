// One page of plans in creation order (plan ids are ULIDs), after the cursor (a plan id), or, when
// $newest_first, newest first, before the cursor; and, when $count, how many match (else null);
// $search (lower case) keeps those whose description, id or project holds it; $has_corrections those
// holding a correction (or, false, none), $has_pending_reviews those with a review waiting (or none),
// $max_confidence those with a current decision of a confidence at most it. The page is an ordered
// seek of plan_id_unique from the cursor, one way or the other, which stops once the page is full;
// the count reads every plan, and is skipped unless asked for. Visibility is access/_sees_plan.
// What the filters cost, per plan the seek passes over: $has_corrections a seek of
// decision_plan_type_sequence for the plan's prompt_definition and user_intervention decisions (the
// two types a correction decision takes: domain.correction.correction_decision), a handful;
// $has_pending_reviews a seek of review_plan_status; $max_confidence a seek of decision_plan_id,
// reading the plan's decisions until one is low enough, all of them for a plan that has none. A
// filter few plans pass makes the seek pass over many before the page is full: at worst every plan
// (and, for $max_confidence, every decision), as the count does.
CALL () {
  WITH 1 AS counted WHERE $count
  MATCH (plan:Plan)
  WHERE
    // include: access/_sees_plan
    AND ($phase IS NULL OR plan.phase = $phase)
    AND ($top_level IS NULL OR $top_level = (NOT EXISTS { (plan)-[:CHILD_OF]->() }))
    AND ($search IS NULL OR toLower(plan.description) CONTAINS $search OR toLower(plan.plan_id) CONTAINS $search
         OR toLower(coalesce(plan.project, '')) CONTAINS $search)
    AND ($has_corrections IS NULL OR $has_corrections = EXISTS {
      MATCH (c:Decision) WHERE c.plan_id = plan.plan_id AND c.decision_type IN ['prompt_definition', 'user_intervention'] AND c.is_correction
    })
    AND ($has_pending_reviews IS NULL OR $has_pending_reviews = EXISTS {
      MATCH (r:Review) WHERE r.plan_id = plan.plan_id AND r.status = 'pending'
    })
    AND ($max_confidence IS NULL OR EXISTS {
      MATCH (d:Decision) WHERE d.plan_id = plan.plan_id AND d.superseded_at IS NULL AND d.confidence_score <= $max_confidence
    })
  RETURN count(plan) AS total
}
CALL () {
  CALL () {
    WITH 1 AS oldest_first WHERE NOT $newest_first
    MATCH (plan:Plan)
    USING INDEX SEEK plan:Plan(plan_id)
    WHERE plan.plan_id > coalesce($after, '')
      AND
      // include: access/_sees_plan
      AND ($phase IS NULL OR plan.phase = $phase)
      AND ($top_level IS NULL OR $top_level = (NOT EXISTS { (plan)-[:CHILD_OF]->() }))
      AND ($search IS NULL OR toLower(plan.description) CONTAINS $search OR toLower(plan.plan_id) CONTAINS $search
           OR toLower(coalesce(plan.project, '')) CONTAINS $search)
      AND ($has_corrections IS NULL OR $has_corrections = EXISTS {
        MATCH (c:Decision) WHERE c.plan_id = plan.plan_id AND c.decision_type IN ['prompt_definition', 'user_intervention'] AND c.is_correction
      })
      AND ($has_pending_reviews IS NULL OR $has_pending_reviews = EXISTS {
        MATCH (r:Review) WHERE r.plan_id = plan.plan_id AND r.status = 'pending'
      })
      AND ($max_confidence IS NULL OR EXISTS {
        MATCH (d:Decision) WHERE d.plan_id = plan.plan_id AND d.superseded_at IS NULL AND d.confidence_score <= $max_confidence
      })
    WITH plan ORDER BY plan.plan_id
    LIMIT $limit
    RETURN plan.plan_id AS plan_id
    UNION ALL
    WITH 1 AS newest_first WHERE $newest_first
    MATCH (plan:Plan)
    USING INDEX SEEK plan:Plan(plan_id)
    WHERE plan.plan_id < coalesce($after, '\uffff')
      AND
      // include: access/_sees_plan
      AND ($phase IS NULL OR plan.phase = $phase)
      AND ($top_level IS NULL OR $top_level = (NOT EXISTS { (plan)-[:CHILD_OF]->() }))
      AND ($search IS NULL OR toLower(plan.description) CONTAINS $search OR toLower(plan.plan_id) CONTAINS $search
           OR toLower(coalesce(plan.project, '')) CONTAINS $search)
      AND ($has_corrections IS NULL OR $has_corrections = EXISTS {
        MATCH (c:Decision) WHERE c.plan_id = plan.plan_id AND c.decision_type IN ['prompt_definition', 'user_intervention'] AND c.is_correction
      })
      AND ($has_pending_reviews IS NULL OR $has_pending_reviews = EXISTS {
        MATCH (r:Review) WHERE r.plan_id = plan.plan_id AND r.status = 'pending'
      })
      AND ($max_confidence IS NULL OR EXISTS {
        MATCH (d:Decision) WHERE d.plan_id = plan.plan_id AND d.superseded_at IS NULL AND d.confidence_score <= $max_confidence
      })
    WITH plan ORDER BY plan.plan_id DESC
    LIMIT $limit
    RETURN plan.plan_id AS plan_id
  }
  RETURN collect(plan_id) AS plan_ids
}
RETURN CASE WHEN $count THEN total END AS total, plan_ids
