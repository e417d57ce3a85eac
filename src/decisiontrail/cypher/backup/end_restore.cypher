// The restore's constraint goes when the restore ends, however it ended.
DROP CONSTRAINT restore_dump_id IF EXISTS
