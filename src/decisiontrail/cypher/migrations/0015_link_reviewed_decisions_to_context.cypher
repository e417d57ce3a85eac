// Decisions recorded by resolving a review before 0015 were not linked to the context the
// review captured for them; link them, once (a second run finds nothing to link).
MATCH (review:Review)-[:RESOLVED_AS]->(d:Decision)
WHERE NOT EXISTS { (d)-[:CAPTURED]->(:Context) }
MATCH (review)-[:CAPTURED]->(c:Context)
WHERE c.context_hash = d.hot_context_hash
CREATE (d)-[:CAPTURED]->(c)
