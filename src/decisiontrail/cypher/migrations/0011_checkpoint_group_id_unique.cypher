CREATE CONSTRAINT checkpoint_group_id_unique IF NOT EXISTS
FOR (g:CheckpointGroup) REQUIRE g.group_id IS UNIQUE
