// A task's pending write by its key: the same write stored twice is one node. Keyed by the
// checkpoint's key, not linked to its node: LangGraph may store a checkpoint's writes before the
// checkpoint itself (the two are saved in the background, apart).
CREATE CONSTRAINT checkpoint_write_key_unique IF NOT EXISTS
FOR (w:CheckpointWrite) REQUIRE (w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx) IS UNIQUE
