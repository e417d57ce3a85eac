// Stores a task's writes against a checkpoint, each keyed by its index: a write stored again is
// left as it was, except a special one (an error, an interrupt: a negative index), which is replaced.
UNWIND $writes AS row
MERGE (w:CheckpointWrite {
  thread_id: $thread_id, checkpoint_ns: $checkpoint_ns, checkpoint_id: $checkpoint_id, task_id: $task_id, idx: row.idx
})
ON CREATE SET w += row.properties
ON MATCH SET w += CASE WHEN row.idx < 0 THEN row.properties ELSE {} END
