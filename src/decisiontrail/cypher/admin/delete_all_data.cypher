// A wipe's second step (graphdb.admin.delete_all_data): up to $batch nodes, deleted in the
// caller's transaction; called again until it deletes none. Keeps the migration ledger:
// constraints and indexes survive a wipe, so it stays true. Batches of 1,000 nodes: under the 8 MB
// limit of tests/test_large_transactions.py (10,000 decisions went past it). Run after
// admin/delete_all_relationships, a node has no relationship left to delete with it (DETACH: but
// for one written in between).
MATCH (n) WHERE NOT n:SchemaMigration
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(n) AS deleted
