// Keeps the migration ledger: constraints and indexes survive a wipe, so it stays true.
// In batches of its own transactions, so a large database fits the transaction memory limit;
// it must run as an auto-commit query (session.run), not inside a transaction function.
MATCH (n) WHERE NOT n:SchemaMigration
CALL (n) {
  DETACH DELETE n
} IN TRANSACTIONS OF 10000 ROWS
