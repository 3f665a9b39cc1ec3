-- Ratchet for Go: SQLite schema, version 17: attempt records.
--
-- ratchet:compatible
--
-- scheduler_job_attempt holds a record of every run of a job that did
-- not end it SUCCEEDED (spi.AttemptStore, Client.Attempts): its claim,
-- node, start and end, outcome (failed, timed-out, snoozed, cancelled,
-- crashed, released, expired) and sanitized error. It is written in the
-- transaction of the transition that ends the run; a success writes none
-- (the job row records it), so the hot path pays nothing. A job keeps
-- the records of its last 25 claims. No foreign key: the records stay
-- when the job is archived, as its log lines do, and go when it is
-- deleted or purged. Same conventions as 0001_init.sql.

CREATE TABLE scheduler_job_attempt (
    job_id        TEXT    NOT NULL,
    claim_seq     INTEGER NOT NULL,
    node_id       TEXT,
    started_time  INTEGER,
    finished_time INTEGER,
    outcome       TEXT    NOT NULL,
    error_text    TEXT,
    PRIMARY KEY (job_id, claim_seq)
);

INSERT INTO ratchet_schema_version (version, applied_at, compatible)
VALUES (17, CAST(strftime('%s', 'now') AS INTEGER) * 1000000, 1);
