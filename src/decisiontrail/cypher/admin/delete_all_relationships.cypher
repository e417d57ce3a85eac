// A wipe's first step: every relationship, in batches of their own transactions, before any node
// (admin/delete_all_data). Deleted with their nodes, a batch took every relationship of each node
// in it, and a node with very many (a plan's IN_PLAN, a large correction's SUPERSEDED_BY) took
// its batch past the transaction memory limit. Batches of 1,000: under the 8 MB limit of
// tests/test_large_transactions.py, 10,000 deletions went past it. The migration ledger holds no
// relationship. It must run as an auto-commit query (session.run), not inside a transaction function.
MATCH ()-[r]->()
CALL (r) {
  DELETE r
} IN TRANSACTIONS OF 1000 ROWS
