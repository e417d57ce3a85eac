// The plans' decisions with every relationship they point along: one row per plan, holding its
// decisions (the driver decodes one value per plan, where a row per decision cost a message
// each); collected plan by plan, so the database holds one plan's at a time. The loader sends
// plans here up to DECISIONS_PER_STATEMENT decisions a statement; a larger plan is read by
// plan_decision_rows, a row per decision (keep the two maps' columns the same).
// Times as ISO text (toString): Python parses it in C, where hydrating the driver's DateTime was most of a load.
UNWIND $plan_ids AS plan_id
CALL (plan_id) {
  MATCH (:Plan {plan_id: plan_id})<-[:IN_PLAN]-(d:Decision)
  RETURN collect({
    decision: d {.*, idempotency_key: null, created_at: toString(d.created_at), superseded_at: toString(d.superseded_at)},
    plan_ids: [(d)-[:IN_PLAN]->(plan:Plan) | plan.plan_id],
    parent_ids: [(d)-[:PARENT]->(parent:Decision) | parent.decision_id],
    depends_on: [(d)-[dep:DEPENDS_ON]->(dependency:Decision) | [dependency.decision_id, dep.ordinal]],
    corrects_ids: [(d)-[:CORRECTS]->(original:Decision) | original.decision_id],
    superseded_by: [(d)-[sup:SUPERSEDED_BY]->(successor:Decision) | [successor.decision_id, toString(sup.at)]],
    has_context: EXISTS { (d)-[:CAPTURED]->(:Context) }
  }) AS decisions
}
RETURN plan_id, decisions
