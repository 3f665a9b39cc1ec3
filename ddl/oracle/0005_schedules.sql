-- Ratchet for Go: Oracle schema, version 5: recurring schedules.
--
-- One row per schedule: its definition (the client's encoding of the
-- expression, zone, job template and policies, opaque here), the next
-- slot not yet fired, and a version that every write advances: an update
-- or a fire is a compare-and-set on it. A fire inserts its slots' jobs
-- under their unique idempotency keys in the same transaction, so each
-- slot fires once. Same conventions as 0001_init.sql: plain SQL,
-- unqualified names, idempotent statements.
CREATE TABLE IF NOT EXISTS scheduler_schedule (
    schedule_id    VARCHAR2(255 CHAR) NOT NULL,
    task_name      VARCHAR2(255 CHAR) NOT NULL,
    definition     BLOB               NOT NULL,
    paused         NUMBER(1)          DEFAULT 0 NOT NULL,
    next_fire_time TIMESTAMP(6)       NOT NULL,
    last_fire_time TIMESTAMP(6),
    last_job_id    RAW(16),
    skipped_count  NUMBER(19)         DEFAULT 0 NOT NULL,
    version        NUMBER(19)         NOT NULL,
    created_time   TIMESTAMP(6)       NOT NULL,
    updated_time   TIMESTAMP(6)       NOT NULL,
    CONSTRAINT pk_scheduler_schedule PRIMARY KEY (schedule_id)
);

-- The scheduler's pass reads the due schedules in next-fire order.
CREATE INDEX IF NOT EXISTS idx_scheduler_schedule_due
    ON scheduler_schedule (paused, next_fire_time, schedule_id);

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 5, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 5);
