// A restore succeeded: its nodes lose their marks. In batches of their own transactions (run as an
// auto-commit query), so a large database fits the transaction memory limit.
MATCH (n:Restoring)
CALL (n) {
  REMOVE n:Restoring, n._dump_id
} IN TRANSACTIONS OF 10000 ROWS
