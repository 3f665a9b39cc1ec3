-- Ratchet for Go: MySQL / MariaDB schema, version 7: the job logs and the skipped slots of schedules.
--
-- What task bodies log through their JobContext's logger: one row per
-- line, keyed by the job, the claim of the execution that logged it and
-- the line's number in that execution. Appends are fenced by the job's
-- claim sequence (checked under the job row's lock) and bounded per job.
-- No foreign key: a job's lines stay when it is archived, and have their
-- own retention (RATCHET_LOG_RETENTION_DAYS), swept by logged_time. An
-- empty message is NULL. Same conventions as 0001_init.sql.
CREATE TABLE scheduler_job_log (
    job_id      BINARY(16)  NOT NULL,
    claim_seq   BIGINT      NOT NULL,
    line        INT         NOT NULL,
    run         INT         NOT NULL,
    logged_time DATETIME(6) NOT NULL,
    log_level   VARCHAR(16) NOT NULL,
    message     TEXT,
    PRIMARY KEY (job_id, claim_seq, line),
    -- The retention sweep finds the old lines.
    KEY idx_scheduler_job_log_time (logged_time)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The schedules' skipped slots: one row per fire that skipped slots
-- (misfires, overlaps), written in the fire's transaction, deleted with
-- the schedule.
CREATE TABLE scheduler_schedule_skip (
    schedule_id   VARBINARY(255) NOT NULL,
    from_time     DATETIME(6)    NOT NULL,
    to_time       DATETIME(6)    NOT NULL,
    slots         BIGINT         NOT NULL,
    recorded_time DATETIME(6)    NOT NULL,
    PRIMARY KEY (schedule_id, from_time)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (7, UTC_TIMESTAMP(6));
