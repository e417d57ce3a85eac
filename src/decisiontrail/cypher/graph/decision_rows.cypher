// The plans' decisions with every relationship they point along, one row each.
UNWIND $plan_ids AS plan_id
MATCH (:Plan {plan_id: plan_id})<-[:IN_PLAN]-(d:Decision)
RETURN
  d {.*, idempotency_key: null} AS decision,
  [(d)-[:IN_PLAN]->(plan:Plan) | plan.plan_id] AS plan_ids,
  [(d)-[:PARENT]->(parent:Decision) | parent.decision_id] AS parent_ids,
  [(d)-[dep:DEPENDS_ON]->(dependency:Decision) | [dependency.decision_id, dep.ordinal]] AS depends_on,
  [(d)-[:CORRECTS]->(original:Decision) | original.decision_id] AS corrects_ids,
  [(d)-[sup:SUPERSEDED_BY]->(successor:Decision) | [successor.decision_id, sup.at]] AS superseded_by,
  EXISTS { (d)-[:CAPTURED]->(:Context) } AS has_context
