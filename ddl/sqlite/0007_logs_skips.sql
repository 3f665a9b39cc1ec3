-- Ratchet for Go: SQLite schema, version 7: the job logs and the skipped slots of schedules.
--
-- What task bodies log through their JobContext's logger: one row per
-- line, keyed by the job, the claim of the execution that logged it and
-- the line's number in that execution. Appends are fenced by the job's
-- claim sequence (checked in the append's write transaction) and bounded
-- per job. No foreign key: a job's lines stay when it is archived, and
-- have their own retention (RATCHET_LOG_RETENTION_DAYS), swept by
-- logged_time. An empty message is NULL. Same conventions as
-- 0001_init.sql: times are microseconds since the Unix epoch, text
-- compares byte for byte.
CREATE TABLE scheduler_job_log (
    job_id      TEXT    NOT NULL,
    claim_seq   INTEGER NOT NULL,
    line        INTEGER NOT NULL,
    run         INTEGER NOT NULL,
    logged_time INTEGER NOT NULL,
    log_level   TEXT    NOT NULL,
    message     TEXT,
    PRIMARY KEY (job_id, claim_seq, line)
);

-- The retention sweep finds the old lines.
CREATE INDEX idx_scheduler_job_log_time ON scheduler_job_log (logged_time);

-- The schedules' skipped slots: one row per fire that skipped slots
-- (misfires, overlaps), written in the fire's transaction, deleted with
-- the schedule.
CREATE TABLE scheduler_schedule_skip (
    schedule_id   TEXT    NOT NULL,
    from_time     INTEGER NOT NULL,
    to_time       INTEGER NOT NULL,
    slots         INTEGER NOT NULL,
    recorded_time INTEGER NOT NULL,
    PRIMARY KEY (schedule_id, from_time)
);

INSERT INTO ratchet_schema_version (version, applied_at)
VALUES (7, CAST(strftime('%s', 'now') AS INTEGER) * 1000000);
