-- Ratchet for Go: MySQL / MariaDB schema, version 9: signals.
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
-- goes when the job is archived. MySQL has no partial indexes, so outcome
-- (NULL while waiting) leads the keys. Same conventions as 0001_init.sql.
CREATE TABLE scheduler_job_signal (
    job_id      BINARY(16)     NOT NULL,
    name        VARBINARY(255) NOT NULL,
    signal_key  VARBINARY(255),
    deadline    DATETIME(6),
    outcome     VARCHAR(16),
    payload     LONGBLOB,
    resolved_at DATETIME(6),
    PRIMARY KEY (job_id),
    -- A delivery by key finds the unresolved waits of a key and name in
    -- id order.
    KEY idx_scheduler_job_signal_key (outcome, signal_key, name, job_id),
    -- The signal sweeper finds the unresolved waits whose deadline has
    -- come, in deadline order.
    KEY idx_scheduler_job_signal_deadline (outcome, deadline, job_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (9, UTC_TIMESTAMP(6));
