-- Ratchet for Go: PostgreSQL schema, version 5: recurring schedules.
--
-- One row per schedule: its definition (the client's encoding of the
-- expression, zone, job template and policies, opaque here), the next
-- slot not yet fired, and a version that every write advances: an update
-- or a fire is a compare-and-set on it. A fire inserts its slots' jobs
-- under their unique idempotency keys in the same transaction, so each
-- slot fires once. Ids compare byte for byte (COLLATE "C"). Same
-- conventions as 0001_init.sql.
CREATE TABLE scheduler_schedule (
    schedule_id    text COLLATE "C" NOT NULL PRIMARY KEY,
    task_name      text        NOT NULL,
    definition     bytea       NOT NULL,
    paused         integer     NOT NULL DEFAULT 0,
    next_fire_time timestamptz NOT NULL,
    last_fire_time timestamptz,
    last_job_id    uuid,
    skipped_count  bigint      NOT NULL DEFAULT 0,
    version        bigint      NOT NULL,
    created_time   timestamptz NOT NULL,
    updated_time   timestamptz NOT NULL
);

-- The scheduler's pass reads the due schedules in next-fire order.
CREATE INDEX idx_scheduler_schedule_due
    ON scheduler_schedule (next_fire_time, schedule_id)
    WHERE paused = 0;

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (5, now());
