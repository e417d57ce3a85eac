// A LangGraph checkpoint by its key (graphdb.checkpoints): a thread's latest in a namespace is an
// ordered seek from the end of this index, and a thread's checkpoints a seek on its first property.
CREATE CONSTRAINT checkpoint_key_unique IF NOT EXISTS
FOR (c:Checkpoint) REQUIRE (c.thread_id, c.checkpoint_ns, c.checkpoint_id) IS UNIQUE
