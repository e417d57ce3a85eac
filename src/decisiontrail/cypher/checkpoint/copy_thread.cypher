// Copies a thread's checkpoints and pending writes, every namespace, to another thread; the copies
// hold the same blobs (a blob goes when the last checkpoint holding it goes).
CALL () {
  MATCH (source:Checkpoint {thread_id: $source_thread_id})
  WHERE source.checkpoint_ns IS NOT NULL AND source.checkpoint_id IS NOT NULL
  MERGE (copy:Checkpoint {thread_id: $target_thread_id, checkpoint_ns: source.checkpoint_ns, checkpoint_id: source.checkpoint_id})
  SET copy += source {.*, thread_id: $target_thread_id}
  WITH source, copy
  MATCH (source)-[:HOLDS]->(blob:CheckpointBlob)
  MERGE (copy)-[:HOLDS]->(blob)
}
CALL () {
  MATCH (w:CheckpointWrite {thread_id: $source_thread_id})
  WHERE w.checkpoint_ns IS NOT NULL AND w.checkpoint_id IS NOT NULL AND w.task_id IS NOT NULL AND w.idx IS NOT NULL
  MERGE (copy:CheckpointWrite {
    thread_id: $target_thread_id, checkpoint_ns: w.checkpoint_ns, checkpoint_id: w.checkpoint_id, task_id: w.task_id, idx: w.idx
  })
  SET copy += w {.*, thread_id: $target_thread_id}
}
