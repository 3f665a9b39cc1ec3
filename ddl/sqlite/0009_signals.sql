-- Ratchet for Go: SQLite schema, version 9: signals.
--
-- A job inserted with a signal wait is WAITING (never claimed) and has one
-- row here: the signal it waits for (name), the key a delivery by key
-- finds it by (signal_key, NULL for none) and when the wait times out
-- (deadline, NULL for never). outcome is NULL while the job waits, then
-- DELIVERED, TIMED_OUT or CANCELLED; payload is the delivered signal's
-- (NULL unless delivered) and resolved_at when the wait ended. Nothing is
-- added to the job row: a resolution is a guarded UPDATE of the job
-- (WAITING to PENDING or CANCELLED) and of this row, in one transaction
-- (SQLite's writers take turns). No foreign key: a wait lives as long as
-- its job, and goes when the job is archived. Same conventions as
-- 0001_init.sql.
CREATE TABLE scheduler_job_signal (
    job_id      TEXT    NOT NULL PRIMARY KEY,
    name        TEXT    NOT NULL,
    signal_key  TEXT,
    deadline    INTEGER,
    outcome     TEXT,
    payload     BLOB,
    resolved_at INTEGER
);

-- A delivery by key finds the unresolved waits of a key and name in id
-- order; only those are in it.
CREATE INDEX idx_scheduler_job_signal_key
    ON scheduler_job_signal (signal_key, name, job_id)
    WHERE outcome IS NULL;

-- The signal sweeper finds the unresolved waits whose deadline has come,
-- in deadline order.
CREATE INDEX idx_scheduler_job_signal_deadline
    ON scheduler_job_signal (deadline, job_id)
    WHERE outcome IS NULL AND deadline IS NOT NULL;

INSERT INTO ratchet_schema_version (version, applied_at)
VALUES (9, CAST(strftime('%s', 'now') AS INTEGER) * 1000000);
