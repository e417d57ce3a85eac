// Every plan in the database, in creation order.
MATCH (p:Plan)
RETURN p.plan_id AS plan_id
ORDER BY p.created_at, p.plan_id
