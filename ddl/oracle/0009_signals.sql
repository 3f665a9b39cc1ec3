-- Ratchet for Go: Oracle schema, version 9: signals.
--
-- A job inserted with a signal wait is WAITING (never claimed) and has one
-- row here: the signal it waits for (name), the key a delivery by key
-- finds it by (signal_key, NULL for none) and when the wait times out
-- (deadline, NULL for never). outcome is NULL while the job waits, then
-- DELIVERED, TIMED_OUT or CANCELLED; payload is the delivered signal's
-- (NULL unless delivered) and resolved_at when the wait ended. Nothing is
-- added to the job row: a resolution is a guarded UPDATE of the job
-- (WAITING to PENDING or CANCELLED) and of this row, in one transaction,
-- so that the row lock on the job lets exactly one of two racing
-- resolutions apply. No foreign key: a wait lives as long as its job, and
-- goes when the job is archived. Oracle has no partial indexes, so
-- outcome (NULL while waiting) leads the keys. Same conventions as
-- 0001_init.sql: idempotent statements.
CREATE TABLE IF NOT EXISTS scheduler_job_signal (
    job_id      RAW(16)            NOT NULL,
    name        VARCHAR2(255 CHAR) NOT NULL,
    signal_key  VARCHAR2(255 CHAR),
    deadline    TIMESTAMP(6),
    outcome     VARCHAR2(16),
    payload     BLOB,
    resolved_at TIMESTAMP(6),
    CONSTRAINT pk_scheduler_job_signal PRIMARY KEY (job_id)
);

-- A delivery by key finds the unresolved waits of a key and name in id
-- order.
CREATE INDEX IF NOT EXISTS idx_scheduler_job_signal_key
    ON scheduler_job_signal (outcome, signal_key, name, job_id);

-- The signal sweeper finds the unresolved waits whose deadline has come,
-- in deadline order.
CREATE INDEX IF NOT EXISTS idx_scheduler_job_signal_deadline
    ON scheduler_job_signal (outcome, deadline, job_id);

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 9, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 9);
