-- Ratchet for Go: PostgreSQL schema, version 7: the job logs and the skipped slots of schedules.
--
-- What task bodies log through their JobContext's logger: one row per
-- line, keyed by the job, the claim of the execution that logged it and
-- the line's number in that execution. Appends are fenced by the job's
-- claim sequence (checked under the job row's lock) and bounded per job.
-- No foreign key: a job's lines stay when it is archived, and have their
-- own retention (RATCHET_LOG_RETENTION_DAYS), swept by logged_time. An
-- empty message is NULL. Same conventions as 0001_init.sql.
CREATE TABLE scheduler_job_log (
    job_id      uuid        NOT NULL,
    claim_seq   bigint      NOT NULL,
    line        integer     NOT NULL,
    run         integer     NOT NULL,
    logged_time timestamptz NOT NULL,
    log_level   text        NOT NULL,
    message     text,
    PRIMARY KEY (job_id, claim_seq, line)
);

-- The retention sweep finds the old lines.
CREATE INDEX idx_scheduler_job_log_time ON scheduler_job_log (logged_time);

-- The schedules' skipped slots: one row per fire that skipped slots
-- (misfires, overlaps), written in the fire's transaction, deleted with
-- the schedule.
CREATE TABLE scheduler_schedule_skip (
    schedule_id   text COLLATE "C" NOT NULL,
    from_time     timestamptz NOT NULL,
    to_time       timestamptz NOT NULL,
    slots         bigint      NOT NULL,
    recorded_time timestamptz NOT NULL,
    PRIMARY KEY (schedule_id, from_time)
);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (7, now());
