MATCH (d:Decision {decision_id: $decision_id}), (dependency:Decision {decision_id: $depends_on_id})
WITH d, dependency, COUNT { (d)-[:DEPENDS_ON]->() } AS ordinal
CREATE (d)-[:DEPENDS_ON {ordinal: ordinal}]->(dependency)
