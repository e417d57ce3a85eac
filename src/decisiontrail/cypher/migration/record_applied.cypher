MERGE (m:SchemaMigration {name: $name})
ON CREATE SET m.applied_at = datetime()
