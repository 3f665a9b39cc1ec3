-- Ratchet for Go: MySQL / MariaDB schema, version 5: recurring schedules.
--
-- One row per schedule: its definition (the client's encoding of the
-- expression, zone, job template and policies, opaque here), the next
-- slot not yet fired, and a version that every write advances: an update
-- or a fire is a compare-and-set on it. A fire inserts its slots' jobs
-- under their unique idempotency keys in the same transaction, so each
-- slot fires once. Ids compare byte for byte (VARBINARY). Same conventions
-- as 0001_init.sql.
CREATE TABLE scheduler_schedule (
    schedule_id    VARBINARY(255) NOT NULL,
    task_name      VARCHAR(255)   NOT NULL,
    definition     LONGBLOB       NOT NULL,
    paused         INT            NOT NULL DEFAULT 0,
    next_fire_time DATETIME(6)    NOT NULL,
    last_fire_time DATETIME(6),
    last_job_id    BINARY(16),
    skipped_count  BIGINT         NOT NULL DEFAULT 0,
    version        BIGINT         NOT NULL,
    created_time   DATETIME(6)    NOT NULL,
    updated_time   DATETIME(6)    NOT NULL,
    PRIMARY KEY (schedule_id),
    -- The scheduler's pass reads the due schedules in next-fire order.
    KEY idx_scheduler_schedule_due (paused, next_fire_time, schedule_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (5, UTC_TIMESTAMP(6));
