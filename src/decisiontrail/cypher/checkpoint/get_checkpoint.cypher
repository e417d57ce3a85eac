// One checkpoint by its key, with its channels' blobs and its pending writes (the tail is
// list_checkpoints', verbatim).
MATCH (c:Checkpoint {thread_id: $thread_id, checkpoint_ns: $checkpoint_ns, checkpoint_id: $checkpoint_id})
CALL (c) {
  MATCH (c)-[:HOLDS]->(blob:CheckpointBlob)
  WHERE blob.blob IS NOT NULL
  RETURN collect(blob {.channel, .version, .type, .blob}) AS blobs
}
CALL (c) {
  MATCH (w:CheckpointWrite {thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns, checkpoint_id: c.checkpoint_id})
  WHERE w.task_id IS NOT NULL AND w.idx IS NOT NULL
  RETURN collect(w {.task_id, .idx, .task_path, .channel, .type, .blob}) AS writes
}
RETURN c {.thread_id, .checkpoint_ns, .checkpoint_id, .parent_checkpoint_id, .type, .checkpoint, .metadata} AS checkpoint,
  blobs, writes
