// While a restore runs, each node it writes carries its id in the dump (_dump_id) and the :Restoring
// label; this constraint's index finds a relationship's ends, and refuses a dump naming a node twice.
CREATE CONSTRAINT restore_dump_id IF NOT EXISTS
FOR (n:Restoring) REQUIRE n._dump_id IS UNIQUE
