MATCH (m:SchemaMigration)
RETURN m.name AS name
ORDER BY name
