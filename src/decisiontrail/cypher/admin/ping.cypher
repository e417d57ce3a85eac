// Readiness: the database takes a transaction (a server that answers but whose database has stopped
// taking them, after a disk full say, or a database that does not exist, is not ready).
RETURN 1 AS ready
