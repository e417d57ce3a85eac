// What a dump will hold: data nodes by label and relationships by type (the migration ledger excluded).
CALL () {
  MATCH (n) WHERE NOT n:SchemaMigration
  UNWIND labels(n) AS label
  WITH label, count(*) AS count
  RETURN collect([label, count]) AS labels
}
CALL () {
  MATCH (a)-[r]->(b) WHERE NOT a:SchemaMigration AND NOT b:SchemaMigration
  WITH type(r) AS type, count(*) AS count
  RETURN collect([type, count]) AS types
}
RETURN labels, types
