-- Ratchet for Go: SQLite schema, version 16: paused tasks.
--
-- ratchet:compatible
--
-- scheduler_task_pause holds the tasks paused fleet-wide
-- (spi.TaskPauser, Client.PauseTask), one row each with the time it was
-- paused. Every claim reads it in the statement that picks its
-- candidates and passes over the jobs of the tasks it names; ResumeTask
-- deletes the row. The table is read by primary key, once per task and
-- priority level of a claim: empty, it costs an index probe. Same conventions as 0001_init.sql.

CREATE TABLE scheduler_task_pause (
    task_name   TEXT    NOT NULL PRIMARY KEY,
    paused_time INTEGER NOT NULL
);

INSERT INTO ratchet_schema_version (version, applied_at, compatible)
VALUES (16, CAST(strftime('%s', 'now') AS INTEGER) * 1000000, 1);
