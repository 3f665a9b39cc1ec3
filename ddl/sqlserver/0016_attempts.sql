-- Ratchet for Go: SQL Server schema, version 16: attempt records.
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
-- deleted or purged. Same conventions as 0001_init.sql; batches separated by GO.
CREATE TABLE scheduler_job_attempt (
    job_id        BINARY(16)     NOT NULL,
    claim_seq     BIGINT         NOT NULL,
    node_id       VARBINARY(255) NULL,
    started_time  DATETIME2(6)   NULL,
    finished_time DATETIME2(6)   NULL,
    outcome       NVARCHAR(32)   NOT NULL,
    error_text    NVARCHAR(MAX)  NULL,
    CONSTRAINT pk_scheduler_job_attempt PRIMARY KEY (job_id, claim_seq)
);
GO

INSERT INTO ratchet_schema_version (version, applied_at, compatible) VALUES (16, SYSUTCDATETIME(), 1);
