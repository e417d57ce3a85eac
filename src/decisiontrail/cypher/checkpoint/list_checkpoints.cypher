// A thread's checkpoints, newest first: in one namespace or all, before a checkpoint, with every
// metadata term of $filter (graphdb.checkpoints stores metadata as terms), at most $limit.
MATCH (c:Checkpoint {thread_id: $thread_id})
WHERE c.checkpoint_ns IS NOT NULL AND c.checkpoint_id IS NOT NULL
  AND ($checkpoint_ns IS NULL OR c.checkpoint_ns = $checkpoint_ns)
  AND ($checkpoint_id IS NULL OR c.checkpoint_id = $checkpoint_id)
  AND ($before IS NULL OR c.checkpoint_id < $before)
  AND all(term IN coalesce($filter, []) WHERE term IN c.metadata)
WITH c
ORDER BY c.checkpoint_id DESC
LIMIT coalesce($limit, 4611686018427387904)
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
