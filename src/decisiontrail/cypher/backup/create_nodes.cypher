// A batch of a dump's nodes, written as they were. The labels are a parameter (Cypher 5.26's dynamic
// labels) but never input: the service admits only labels of domain/vocabulary.Label.
UNWIND $rows AS row
CREATE (n:$(row.labels))
SET n = row.properties, n:Restoring, n._dump_id = row.id
RETURN count(n) AS written
