UNWIND $decision_ids AS decision_id
MATCH (d:Decision {decision_id: decision_id})
RETURN d {.*} AS decision,
  [(d)-[:PARENT]->(parent:Decision) | parent.decision_id][0] AS parent_decision_id,
  [(d)-[r:DEPENDS_ON]->(dependency:Decision) | [r.ordinal, dependency.decision_id]] AS depends_on,
  [(dependent:Decision)-[:DEPENDS_ON]->(d) | dependent.decision_id] AS downstream_decision_ids,
  [(child:Plan)-[:SPAWNED_BY]->(d) | child.plan_id] AS downstream_plan_ids,
  [(d)-[:CORRECTS]->(original:Decision) | original.decision_id][0] AS corrects_decision_id,
  [(d)-[:SUPERSEDED_BY]->(successor:Decision) | successor.decision_id][0] AS superseded_by
