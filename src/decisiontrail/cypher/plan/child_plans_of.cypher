// The child plans of many plans at once (a DataLoader batch), in creation order.
UNWIND $plan_ids AS parent_id
MATCH (child:Plan)-[:CHILD_OF]->(:Plan {plan_id: parent_id})
WITH parent_id, child ORDER BY child.plan_id
RETURN parent_id, collect(child.plan_id) AS child_ids
