CALL () { MATCH (n) WHERE NOT n:SchemaMigration RETURN count(n) AS nodes }
CALL () { MATCH ()-[r]->() RETURN count(r) AS relationships }
RETURN nodes, relationships
