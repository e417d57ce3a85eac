MATCH (:Decision {decision_id: $decision_id})-[:CHECKPOINTED_IN]->(group:CheckpointGroup)
RETURN group {.*} AS checkpoint_group
