// For each decision, in the order given, the checkpoint group it was recorded with (null when
// none: a Strategize decision, or no such decision).
UNWIND range(0, size($decision_ids) - 1) AS i
CALL (i) {
  OPTIONAL MATCH (:Decision {decision_id: $decision_ids[i]})-[:CHECKPOINTED_IN]->(group:CheckpointGroup)
  RETURN collect(group {.*})[0] AS checkpoint_group
}
RETURN checkpoint_group
ORDER BY i
