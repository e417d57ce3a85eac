MATCH (p:Plan)
RETURN count(p) AS plans
