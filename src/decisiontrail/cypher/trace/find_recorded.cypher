// Of the ids spans would have become, those that exist: a span sent again, not one that came late.
UNWIND $ids AS id
OPTIONAL MATCH (d:Decision {decision_id: id})
OPTIONAL MATCH (p:Plan {plan_id: id})
WITH id WHERE d IS NOT NULL OR p IS NOT NULL
RETURN collect(id) AS found
