// Every relationship between data nodes, streamed, with its ends' element ids.
MATCH (a)-[r]->(b) WHERE NOT a:SchemaMigration AND NOT b:SchemaMigration
RETURN type(r) AS type, elementId(a) AS from, elementId(b) AS to, properties(r) AS properties
