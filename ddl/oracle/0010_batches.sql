-- Ratchet for Go: Oracle schema, version 10: batches.
--
-- A batch is one row here; its children are jobs whose workflow_id is the
-- batch's id. Nothing on this row changes when a child finishes (no hot
-- counter): persisted is the number of children written (the offset of a
-- streaming batch's next chunk, advanced in the chunk's transaction),
-- sealed whether the last chunk was written (1) or more may come (0).
-- outcome is NULL while the batch is open, then SUCCEEDED, FAILED or
-- CANCELLED, set once by a guarded UPDATE (outcome IS NULL) whose row
-- lock lets exactly one of two racing finishers apply; finished_time is
-- when, callback_id the callback job that end inserted (NULL for none).
-- on_success and on_failure are the callback jobs (spi.Job as JSON),
-- each with its id fixed at creation. Oracle has no partial indexes, so
-- outcome (NULL while open) leads the finisher's key. Same conventions as
-- 0001_init.sql: idempotent statements.
CREATE TABLE IF NOT EXISTS scheduler_batch (
    batch_id      RAW(16)            NOT NULL,
    name          VARCHAR2(255 CHAR),
    created_time  TIMESTAMP(6)       NOT NULL,
    on_success    BLOB,
    on_failure    BLOB,
    persisted     NUMBER(19)         DEFAULT 0 NOT NULL,
    sealed        NUMBER(1)          DEFAULT 0 NOT NULL,
    outcome       VARCHAR2(16),
    finished_time TIMESTAMP(6),
    callback_id   RAW(16),
    CONSTRAINT pk_scheduler_batch PRIMARY KEY (batch_id)
);

-- The batch finisher reads the sealed open batches.
CREATE INDEX IF NOT EXISTS idx_scheduler_batch_open
    ON scheduler_batch (outcome, sealed, batch_id);

-- A batch's counts by status, and the finisher's test that none of its
-- children is unfinished (a few probes of this index, however many
-- children finished).
CREATE INDEX IF NOT EXISTS idx_scheduler_job_workflow_status
    ON scheduler_job (workflow_id, status);

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 10, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 10);
