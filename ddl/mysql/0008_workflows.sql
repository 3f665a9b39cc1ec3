-- Ratchet for Go: MySQL / MariaDB schema, version 8: workflows.
--
-- A job of a workflow names it (workflow_id), counts its dependencies
-- (dep_count), how many of them have not finished (dep_waiting: BLOCKED
-- while above zero) and the jobs that depend on it (dep_children: zero
-- for a job no finish has to look further than). The write that finishes
-- a parent records its state on its dependencies and decrements each
-- child's dep_waiting in the same transaction: the row lock on the child
-- serializes two parents finishing at once, so exactly one of them
-- releases it. The archive's copy gets the same columns, in the same
-- order. Same conventions as 0001_init.sql.
ALTER TABLE scheduler_job
    ADD COLUMN workflow_id  BINARY(16),
    ADD COLUMN dep_count    INT NOT NULL DEFAULT 0,
    ADD COLUMN dep_waiting  INT NOT NULL DEFAULT 0,
    ADD COLUMN dep_children INT NOT NULL DEFAULT 0,
    ADD KEY idx_scheduler_job_workflow (workflow_id, job_id);
ALTER TABLE scheduler_job_archive
    ADD COLUMN workflow_id  BINARY(16),
    ADD COLUMN dep_count    INT NOT NULL DEFAULT 0,
    ADD COLUMN dep_waiting  INT NOT NULL DEFAULT 0,
    ADD COLUMN dep_children INT NOT NULL DEFAULT 0;

-- One row per dependency, in the order they were submitted (position).
-- allow_mask is the spi.Allow of the dependency; cond_name and cond_args
-- its workflow condition (NULL for none); parent_status the state the
-- parent finished in (NULL until it has). No foreign key: a dependency
-- lives as long as its child, and goes when the child is archived (a
-- parent is archived only once its children have finished).
CREATE TABLE scheduler_job_dep (
    child_id      BINARY(16)     NOT NULL,
    parent_id     BINARY(16)     NOT NULL,
    position      INT            NOT NULL,
    allow_mask    INT            NOT NULL,
    cond_name     VARBINARY(255),
    cond_args     LONGBLOB,
    parent_status VARCHAR(16),
    PRIMARY KEY (child_id, parent_id),
    KEY idx_scheduler_job_dep_parent (parent_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (8, UTC_TIMESTAMP(6));
