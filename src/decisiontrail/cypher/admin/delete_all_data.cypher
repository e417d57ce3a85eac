// Keeps the migration ledger: constraints and indexes survive a wipe, so it stays true.
// In batches of their own transactions, so a large database fits the transaction memory limit
// (1,000 nodes: under the 8 MB limit of tests/test_large_transactions.py, 10,000 decisions went
// past it); it must run as an auto-commit query (session.run), not inside a transaction function.
// Run after admin/delete_all_relationships, a node has no relationship left to delete with it
// (DETACH: but for one written in between).
MATCH (n) WHERE NOT n:SchemaMigration
CALL (n) {
  DETACH DELETE n
} IN TRANSACTIONS OF 1000 ROWS
