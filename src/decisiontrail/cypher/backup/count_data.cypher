// Whether a restore may write: the data nodes (the migration ledger excluded), and how many of them
// an interrupted restore left behind (still marked :Restoring).
CALL () { MATCH (n) WHERE NOT n:SchemaMigration RETURN count(n) AS nodes }
CALL () { MATCH (n:Restoring) RETURN count(n) AS restoring }
RETURN nodes, restoring
