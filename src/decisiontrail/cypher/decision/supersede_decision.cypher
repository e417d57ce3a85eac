// Links a decision to the one that replaced it. The SET takes the decision's write lock
// before the check, so of two concurrent supersessions exactly one links.
MATCH (d:Decision {decision_id: $decision_id})
SET d.lock__ = true
REMOVE d.lock__
WITH d
MATCH (successor:Decision {decision_id: $superseded_by})
WHERE NOT EXISTS { (d)-[:SUPERSEDED_BY]->() }
CREATE (d)-[:SUPERSEDED_BY {at: $at}]->(successor)
SET d.superseded_at = $at
RETURN count(*) AS superseded
