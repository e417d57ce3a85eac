// Deletes a thread: its checkpoints and pending writes in every namespace, and the blobs only they held.
CALL () {
  MATCH (w:CheckpointWrite {thread_id: $thread_id})
  WHERE w.checkpoint_ns IS NOT NULL AND w.checkpoint_id IS NOT NULL AND w.task_id IS NOT NULL AND w.idx IS NOT NULL
  DELETE w
}
CALL () {
  MATCH (c:Checkpoint {thread_id: $thread_id})
  WHERE c.checkpoint_ns IS NOT NULL AND c.checkpoint_id IS NOT NULL
  OPTIONAL MATCH (c)-[:HOLDS]->(blob:CheckpointBlob)
  WITH collect(DISTINCT c) AS checkpoints, collect(DISTINCT blob) AS blobs
  CALL (checkpoints) {
    UNWIND checkpoints AS c
    DETACH DELETE c
  }
  CALL (blobs) {
    UNWIND blobs AS blob
    WITH blob
    WHERE NOT EXISTS { ()-[:HOLDS]->(blob) }
    DELETE blob
  }
}
