-- Ratchet for Go: SQLite schema, version 4: the tasks of each node.
--
-- A node records, with its heartbeat, the tasks it runs (a JSON array of
-- names, sorted; NULL for a node that recorded none), so that a client can
-- list the pending jobs that no live node runs. Same conventions as
-- 0001_init.sql.
ALTER TABLE scheduler_node ADD COLUMN task_names TEXT;

INSERT INTO ratchet_schema_version (version, applied_at)
VALUES (4, CAST(strftime('%s', 'now') AS INTEGER) * 1000000);
