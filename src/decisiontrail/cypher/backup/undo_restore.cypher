// A restore failed (or was interrupted): what it wrote, and only that, is deleted. In batches of
// their own transactions (run as an auto-commit query).
MATCH (n:Restoring)
CALL (n) {
  DETACH DELETE n
} IN TRANSACTIONS OF 10000 ROWS
