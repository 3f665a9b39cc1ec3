-- Ratchet for Go: SQL Server schema, version 7: the job logs and the skipped slots of schedules.
--
-- What task bodies log through their JobContext's logger: one row per
-- line, keyed by the job, the claim of the execution that logged it and
-- the line's number in that execution. Appends are fenced by the job's
-- claim sequence (checked under the job row's lock) and bounded per job.
-- No foreign key: a job's lines stay when it is archived, and have their
-- own retention (RATCHET_LOG_RETENTION_DAYS), swept by logged_time. An
-- empty message is NULL. Same conventions as 0001_init.sql. batches separated by GO.
CREATE TABLE scheduler_job_log (
    job_id      BINARY(16)    NOT NULL,
    claim_seq   BIGINT        NOT NULL,
    line        INT           NOT NULL,
    run         INT           NOT NULL,
    logged_time DATETIME2(6)  NOT NULL,
    log_level   NVARCHAR(16)  NOT NULL,
    message     NVARCHAR(MAX),
    CONSTRAINT pk_scheduler_job_log PRIMARY KEY (job_id, claim_seq, line)
);
GO

-- The retention sweep finds the old lines.
CREATE INDEX idx_scheduler_job_log_time ON scheduler_job_log (logged_time);
GO

-- The schedules' skipped slots: one row per fire that skipped slots
-- (misfires, overlaps), written in the fire's transaction, deleted with
-- the schedule.
CREATE TABLE scheduler_schedule_skip (
    schedule_id   VARBINARY(255) NOT NULL,
    from_time     DATETIME2(6)   NOT NULL,
    to_time       DATETIME2(6)   NOT NULL,
    slots         BIGINT         NOT NULL,
    recorded_time DATETIME2(6)   NOT NULL,
    CONSTRAINT pk_scheduler_schedule_skip PRIMARY KEY (schedule_id, from_time)
);
GO

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (7, SYSUTCDATETIME());
