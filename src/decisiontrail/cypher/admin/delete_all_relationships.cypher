// A wipe's first step (graphdb.admin.delete_all_data): up to $batch relationships, deleted in the
// caller's transaction, before any node (admin/delete_all_data); called again until it deletes
// none. Deleted with their nodes, a batch took every relationship of each node in it, and a node
// with very many (a plan's IN_PLAN, a large correction's SUPERSEDED_BY) took its batch past the
// transaction memory limit. Batches of 1,000: under the 8 MB limit of
// tests/test_large_transactions.py, 10,000 deletions went past it. The migration ledger holds no
// relationship. A batch per managed write transaction, not CALL {} IN TRANSACTIONS (an auto-commit
// statement): a batch that meets a concurrent writer (a deadlock) is retried, not failed.
MATCH ()-[r]->()
WITH r LIMIT $batch
DELETE r
RETURN count(r) AS deleted
