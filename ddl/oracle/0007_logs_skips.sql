-- Ratchet for Go: Oracle schema, version 7: the job logs and the skipped slots of schedules.
--
-- What task bodies log through their JobContext's logger: one row per
-- line, keyed by the job, the claim of the execution that logged it and
-- the line's number in that execution. Appends are fenced by the job's
-- claim sequence (checked under the job row's lock) and bounded per job.
-- No foreign key: a job's lines stay when it is archived, and have their
-- own retention (RATCHET_LOG_RETENTION_DAYS), swept by logged_time. An
-- empty message is NULL here, as Oracle stores every empty string. Same
-- conventions as 0001_init.sql: plain SQL, unqualified names, idempotent
-- statements.
CREATE TABLE IF NOT EXISTS scheduler_job_log (
    job_id      RAW(16)           NOT NULL,
    claim_seq   NUMBER(19)        NOT NULL,
    line        NUMBER(10)        NOT NULL,
    run         NUMBER(10)        NOT NULL,
    logged_time TIMESTAMP(6)      NOT NULL,
    log_level   VARCHAR2(16 CHAR) NOT NULL,
    message     CLOB,
    CONSTRAINT pk_scheduler_job_log PRIMARY KEY (job_id, claim_seq, line)
);

-- The retention sweep finds the old lines.
CREATE INDEX IF NOT EXISTS idx_scheduler_job_log_time ON scheduler_job_log (logged_time);

-- The schedules' skipped slots: one row per fire that skipped slots
-- (misfires, overlaps), written in the fire's transaction, deleted with
-- the schedule.
CREATE TABLE IF NOT EXISTS scheduler_schedule_skip (
    schedule_id   VARCHAR2(255 CHAR) NOT NULL,
    from_time     TIMESTAMP(6)       NOT NULL,
    to_time       TIMESTAMP(6)       NOT NULL,
    slots         NUMBER(19)         NOT NULL,
    recorded_time TIMESTAMP(6)       NOT NULL,
    CONSTRAINT pk_scheduler_schedule_skip PRIMARY KEY (schedule_id, from_time)
);

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 7, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 7);
