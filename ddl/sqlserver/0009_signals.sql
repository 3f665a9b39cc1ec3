-- Ratchet for Go: SQL Server schema, version 9: signals.
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
-- goes when the job is archived. Same conventions as 0001_init.sql;
-- batches separated by GO.
CREATE TABLE scheduler_job_signal (
    job_id      BINARY(16)     NOT NULL,
    name        VARBINARY(255) NOT NULL,
    signal_key  VARBINARY(255) NULL,
    deadline    DATETIME2(6)   NULL,
    outcome     VARCHAR(16)    NULL,
    payload     VARBINARY(MAX) NULL,
    resolved_at DATETIME2(6)   NULL,
    CONSTRAINT pk_scheduler_job_signal PRIMARY KEY (job_id)
);
GO

-- A delivery by key finds the unresolved waits of a key and name in id
-- order; only those are in it.
CREATE INDEX idx_scheduler_job_signal_key
    ON scheduler_job_signal (signal_key, name, job_id)
    WHERE outcome IS NULL;
GO

-- The signal sweeper finds the unresolved waits whose deadline has come,
-- in deadline order.
CREATE INDEX idx_scheduler_job_signal_deadline
    ON scheduler_job_signal (deadline, job_id)
    WHERE outcome IS NULL AND deadline IS NOT NULL;
GO

-- ListJobs with status WAITING pages by id.
CREATE INDEX idx_scheduler_job_waiting
    ON scheduler_job (job_id)
    WHERE status = 'WAITING';
GO

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (9, SYSUTCDATETIME());
