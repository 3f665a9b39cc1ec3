-- Ratchet for Go: SQLite schema, version 5: recurring schedules.
--
-- One row per schedule: its definition (the client's encoding of the
-- expression, zone, job template and policies, opaque here), the next
-- slot not yet fired, and a version that every write advances: an update
-- or a fire is a compare-and-set on it. A fire inserts its slots' jobs
-- under their unique idempotency keys in the same transaction, so each
-- slot fires once. Same conventions as 0001_init.sql: times are
-- microseconds since the Unix epoch, text compares byte for byte.
CREATE TABLE scheduler_schedule (
    schedule_id    TEXT    NOT NULL PRIMARY KEY,
    task_name      TEXT    NOT NULL,
    definition     BLOB    NOT NULL,
    paused         INTEGER NOT NULL DEFAULT 0,
    next_fire_time INTEGER NOT NULL,
    last_fire_time INTEGER,
    last_job_id    TEXT,
    skipped_count  INTEGER NOT NULL DEFAULT 0,
    version        INTEGER NOT NULL,
    created_time   INTEGER NOT NULL,
    updated_time   INTEGER NOT NULL
);

-- The scheduler's pass reads the due schedules in next-fire order.
CREATE INDEX idx_scheduler_schedule_due
    ON scheduler_schedule (next_fire_time, schedule_id)
    WHERE paused = 0;

INSERT INTO ratchet_schema_version (version, applied_at)
VALUES (5, CAST(strftime('%s', 'now') AS INTEGER) * 1000000);
