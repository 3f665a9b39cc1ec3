-- Ratchet for Go: Oracle schema, version 16: attempt records.
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
-- deleted or purged. Same conventions as 0001_init.sql: idempotent statements.
CREATE TABLE IF NOT EXISTS scheduler_job_attempt (
    job_id        RAW(16)            NOT NULL,
    claim_seq     NUMBER(19)         NOT NULL,
    node_id       VARCHAR2(255 CHAR),
    started_time  TIMESTAMP(6),
    finished_time TIMESTAMP(6),
    outcome       VARCHAR2(32 CHAR)  NOT NULL,
    error_text    CLOB,
    CONSTRAINT pk_scheduler_job_attempt PRIMARY KEY (job_id, claim_seq)
);

INSERT INTO ratchet_schema_version (version, applied_at, compatible)
    SELECT 16, SYS_EXTRACT_UTC(SYSTIMESTAMP), 1 FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 16);
