// The global set of invariants and each project's: one :InvariantSet node each, found by its key
// ('global' or 'project:<name>'), made on first use by MERGE.
CREATE CONSTRAINT invariant_set_key_unique IF NOT EXISTS FOR (s:InvariantSet) REQUIRE s.key IS UNIQUE
