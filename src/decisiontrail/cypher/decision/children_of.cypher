// The children of many decisions at once (a DataLoader batch), in sequence order.
UNWIND $decision_ids AS parent_id
MATCH (child:Decision)-[:PARENT]->(:Decision {decision_id: parent_id})
WITH parent_id, child ORDER BY child.sequence_number
RETURN parent_id, collect(child.decision_id) AS child_ids
