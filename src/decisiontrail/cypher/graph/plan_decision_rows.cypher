// One large plan's decisions, a row each (decision_rows collects a plan's decisions into one
// value, which for a plan of many thousands can exceed the memory Neo4j allows one transaction):
// the same columns as decision_rows' maps, streamed.
MATCH (:Plan {plan_id: $plan_id})<-[:IN_PLAN]-(d:Decision)
RETURN
  d {.*, idempotency_key: null, created_at: toString(d.created_at), superseded_at: toString(d.superseded_at)} AS decision,
  [(d)-[:IN_PLAN]->(plan:Plan) | plan.plan_id] AS plan_ids,
  [(d)-[:PARENT]->(parent:Decision) | parent.decision_id] AS parent_ids,
  [(d)-[dep:DEPENDS_ON]->(dependency:Decision) | [dependency.decision_id, dep.ordinal]] AS depends_on,
  [(d)-[:CORRECTS]->(original:Decision) | original.decision_id] AS corrects_ids,
  [(d)-[sup:SUPERSEDED_BY]->(successor:Decision) | [successor.decision_id, toString(sup.at)]] AS superseded_by,
  EXISTS { (d)-[:CAPTURED]->(:Context) } AS has_context
