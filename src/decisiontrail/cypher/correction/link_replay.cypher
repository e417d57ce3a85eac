// What a replay recorded, linked to the correction that asked for it: each decision depends on the
// correction decision (correcting the guidance later invalidates them), and the replacement, when
// there is one, REPLACES the corrected decision, so correcting it continues the attempt numbering.
// Each dependency is dated (`at`): a read as of a moment before the report leaves it out.
MATCH (correction:Decision {decision_id: $correction_id})
CALL (correction) {
  UNWIND $decision_ids AS id
  MATCH (d:Decision {decision_id: id})
  WHERE d <> correction AND NOT EXISTS { (d)-[:DEPENDS_ON]->(correction) }
  WITH d, COUNT { (d)-[:DEPENDS_ON]->() } AS ordinal
  CREATE (d)-[:DEPENDS_ON {ordinal: ordinal, at: datetime()}]->(correction)
}
CALL () {
  MATCH (replacement:Decision {decision_id: $replacement_id})
  MATCH (corrected:Decision {decision_id: $corrected_id})
  WHERE NOT EXISTS { (replacement)-[:REPLACES]->() }
  CREATE (replacement)-[:REPLACES]->(corrected)
}
RETURN correction.decision_id AS correction_id
