// A batch of a dump's relationships between nodes this restore wrote. The type is a parameter (dynamic
// types, Cypher 5.26), admitted by the service only from domain/vocabulary.Rel. A row whose end is not
// in the dump writes nothing, so `written` falls short of the batch.
UNWIND $rows AS row
MATCH (a:Restoring {_dump_id: row.from})
MATCH (b:Restoring {_dump_id: row.to})
CREATE (a)-[r:$(row.type)]->(b)
SET r = row.properties
RETURN count(r) AS written
