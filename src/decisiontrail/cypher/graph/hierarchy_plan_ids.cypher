// A plan and every plan below it (CHILD_OF points from a child plan to its parent), parents first.
MATCH (root:Plan {plan_id: $plan_id})
MATCH path = (p:Plan)-[:CHILD_OF]->{0,}(root)
RETURN p.plan_id AS plan_id
ORDER BY length(path), p.created_at, p.plan_id
