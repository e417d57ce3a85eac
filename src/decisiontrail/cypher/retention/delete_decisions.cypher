// Deletes one batch of pruned decisions with their relationships, then the context snapshots
// and checkpoint groups nothing captures any more. Correction attempts stay: only their edges go.
UNWIND $decision_ids AS decision_id
MATCH (d:Decision {decision_id: decision_id})
OPTIONAL MATCH (d)-[:CAPTURED]->(context:Context)
OPTIONAL MATCH (d)-[:CHECKPOINTED_IN]->(group:CheckpointGroup)
WITH collect(DISTINCT d) AS decisions, collect(DISTINCT d.decision_id) AS deleted_ids,
  collect(DISTINCT context) AS contexts, collect(DISTINCT group) AS groups
CALL (decisions) {
  UNWIND decisions AS d
  DETACH DELETE d
}
CALL (contexts) {
  UNWIND contexts AS context
  WITH context WHERE NOT EXISTS { ()-[:CAPTURED]->(context) }
  DETACH DELETE context
  RETURN count(*) AS deleted_contexts
}
CALL (groups) {
  UNWIND groups AS group
  WITH group WHERE NOT EXISTS { ()-[:CHECKPOINTED_IN]->(group) }
  DETACH DELETE group
  RETURN count(*) AS deleted_groups
}
RETURN deleted_ids, deleted_contexts, deleted_groups
