-- Ratchet for Go: PostgreSQL schema, version 10: batches.
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
-- each with its id fixed at creation. Same conventions as 0001_init.sql.
CREATE TABLE scheduler_batch (
    batch_id      uuid        PRIMARY KEY,
    name          text,
    created_time  timestamptz NOT NULL,
    on_success    bytea,
    on_failure    bytea,
    persisted     bigint      NOT NULL DEFAULT 0,
    sealed        integer     NOT NULL DEFAULT 0,
    outcome       text,
    finished_time timestamptz,
    callback_id   uuid
);

-- The batch finisher reads the sealed open batches; only those are in it.
CREATE INDEX idx_scheduler_batch_open
    ON scheduler_batch (batch_id)
    WHERE outcome IS NULL AND sealed = 1;

-- A batch's counts by status, and the finisher's test that none of its
-- children is unfinished (a few probes of this index, however many
-- children finished); jobs of no workflow are not in it.
CREATE INDEX idx_scheduler_job_workflow_status
    ON scheduler_job (workflow_id, status)
    WHERE workflow_id IS NOT NULL;

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (10, now());
