// Waits until every index is online (a new index on a large database populates in the background):
// a statement that names an index in a hint fails while that index is still populating.
CALL db.awaitIndexes($timeout_s)
