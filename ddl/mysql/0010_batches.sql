-- Ratchet for Go: MySQL / MariaDB schema, version 10: batches.
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
-- each with its id fixed at creation. MySQL has no partial indexes, so
-- outcome (NULL while open) leads the finisher's key. Same conventions as
-- 0001_init.sql.
CREATE TABLE scheduler_batch (
    batch_id      BINARY(16)     NOT NULL,
    name          VARBINARY(255),
    created_time  DATETIME(6)    NOT NULL,
    on_success    LONGBLOB,
    on_failure    LONGBLOB,
    persisted     BIGINT         NOT NULL DEFAULT 0,
    sealed        INT            NOT NULL DEFAULT 0,
    outcome       VARCHAR(16),
    finished_time DATETIME(6),
    callback_id   BINARY(16),
    PRIMARY KEY (batch_id),
    -- The batch finisher reads the sealed open batches.
    KEY idx_scheduler_batch_open (outcome, sealed, batch_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- A batch's counts by status, and the finisher's test that none of its
-- children is unfinished (a few probes of this index, however many
-- children finished). MySQL has no partial indexes: batch_status is the
-- status of a job of a workflow and NULL for the others, a virtual column
-- so that a status change of a job of no workflow leaves the index alone
-- (an index of (workflow_id, status) cost every claim and completion an
-- index write: 5 % of the burn-down). The archive's copy gets a plain
-- column in the same place, so that the archive's INSERT ... SELECT *
-- still matches.
ALTER TABLE scheduler_job
    ADD COLUMN batch_status VARCHAR(16)
        AS (CASE WHEN workflow_id IS NULL THEN NULL ELSE status END) VIRTUAL,
    ADD KEY idx_scheduler_job_workflow_status (workflow_id, batch_status);
ALTER TABLE scheduler_job_archive ADD COLUMN batch_status VARCHAR(16);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (10, UTC_TIMESTAMP(6));
