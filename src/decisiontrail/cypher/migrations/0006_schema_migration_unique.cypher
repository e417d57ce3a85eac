CREATE CONSTRAINT schema_migration_name_unique IF NOT EXISTS
FOR (m:SchemaMigration) REQUIRE m.name IS UNIQUE
