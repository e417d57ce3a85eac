// Keeps the migration ledger: constraints and indexes survive a wipe, so it stays true.
MATCH (n) WHERE NOT n:SchemaMigration
DETACH DELETE n
