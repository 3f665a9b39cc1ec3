-- Ratchet for Go: SQL Server schema, version 5: recurring schedules.
--
-- One row per schedule: its definition (the client's encoding of the
-- expression, zone, job template and policies, opaque here), the next
-- slot not yet fired, and a version that every write advances: an update
-- or a fire is a compare-and-set on it. A fire inserts its slots' jobs
-- under their unique idempotency keys in the same transaction, so each
-- slot fires once. Same conventions as 0001_init.sql: VARBINARY for names
-- compared byte for byte, batches separated by GO.
CREATE TABLE scheduler_schedule (
    schedule_id    VARBINARY(255) NOT NULL,
    task_name      NVARCHAR(255)  NOT NULL,
    definition     VARBINARY(MAX) NOT NULL,
    paused         INT            NOT NULL CONSTRAINT df_scheduler_schedule_paused DEFAULT 0,
    next_fire_time DATETIME2(6)   NOT NULL,
    last_fire_time DATETIME2(6)   NULL,
    last_job_id    BINARY(16)     NULL,
    skipped_count  BIGINT         NOT NULL CONSTRAINT df_scheduler_schedule_skipped DEFAULT 0,
    version        BIGINT         NOT NULL,
    created_time   DATETIME2(6)   NOT NULL,
    updated_time   DATETIME2(6)   NOT NULL,
    CONSTRAINT pk_scheduler_schedule PRIMARY KEY (schedule_id)
);
GO

-- The scheduler's pass reads the due schedules in next-fire order.
CREATE INDEX idx_scheduler_schedule_due
    ON scheduler_schedule (next_fire_time, schedule_id)
    WHERE paused = 0;
GO

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (5, SYSUTCDATETIME());
