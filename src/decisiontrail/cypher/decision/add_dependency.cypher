// A dependency added after the decision was recorded (a replay's report), dated: an as-of read
// leaves it out before `at` (a dependency recorded with its decision carries no `at`).
MATCH (d:Decision {decision_id: $decision_id}), (dependency:Decision {decision_id: $depends_on_id})
WITH d, dependency, COUNT { (d)-[:DEPENDS_ON]->() } AS ordinal
CREATE (d)-[:DEPENDS_ON {ordinal: ordinal, at: datetime()}]->(dependency)
