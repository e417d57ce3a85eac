// Every data node, streamed; the element id only connects the dump's relationships to their nodes.
MATCH (n) WHERE NOT n:SchemaMigration
RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS properties
