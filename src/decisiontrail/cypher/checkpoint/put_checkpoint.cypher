// Stores one checkpoint (again, when the same one is put twice): its body and metadata, a new blob
// for each channel this put changed, and, for each channel it kept, the blob its parent (the
// checkpoint its config names) holds at that version, or, when the parent does not hold it, one
// that another checkpoint of the thread and namespace does.
MERGE (c:Checkpoint {thread_id: $thread_id, checkpoint_ns: $checkpoint_ns, checkpoint_id: $checkpoint_id})
SET c += $properties
WITH c
OPTIONAL MATCH (parent:Checkpoint {thread_id: $thread_id, checkpoint_ns: $checkpoint_ns, checkpoint_id: $parent_id})
// One put without a plan (a replay from a checkpoint's own config, say) is in its parent's plan.
SET c.plan_id = coalesce(c.plan_id, parent.plan_id)
WITH c, parent
CALL (c) {
  // Put again: what the earlier put held is let go, and a blob nothing else holds goes with it.
  MATCH (c)-[held:HOLDS]->(blob:CheckpointBlob)
  DELETE held
  WITH DISTINCT blob
  WHERE NOT EXISTS { ()-[:HOLDS]->(blob) }
  DELETE blob
}
CALL (c) {
  UNWIND $blobs AS row
  CREATE (c)-[:HOLDS]->(:CheckpointBlob {channel: row.channel, version: row.version, type: row.type, blob: row.blob})
}
CALL (c, parent) {
  UNWIND $kept AS row
  OPTIONAL MATCH (parent)-[:HOLDS]->(held:CheckpointBlob {channel: row.channel, version: row.version})
  OPTIONAL CALL (row, held) {
    WITH row
    WHERE held IS NULL
    MATCH (other:Checkpoint {thread_id: $thread_id, checkpoint_ns: $checkpoint_ns})
      -[:HOLDS]->(found:CheckpointBlob {channel: row.channel, version: row.version})
    WHERE other.checkpoint_id IS NOT NULL
    RETURN found
    LIMIT 1
  }
  WITH coalesce(held, found) AS blob
  WHERE blob IS NOT NULL
  MERGE (c)-[:HOLDS]->(blob)
}
