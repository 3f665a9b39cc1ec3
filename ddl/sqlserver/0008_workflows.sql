-- Ratchet for Go: SQL Server schema, version 8: workflows.
--
-- A job of a workflow names it (workflow_id), counts its dependencies
-- (dep_count), how many of them have not finished (dep_waiting: BLOCKED
-- while above zero) and the jobs that depend on it (dep_children: zero
-- for a job no finish has to look further than). The write that finishes
-- a parent records its state on its dependencies and decrements each
-- child's dep_waiting in the same transaction: the row lock on the child
-- serializes two parents finishing at once, so exactly one of them
-- releases it. The archive's copy gets the same columns, in the same
-- order. Same conventions as 0001_init.sql; batches separated by GO.
ALTER TABLE scheduler_job ADD
    workflow_id  BINARY(16) NULL,
    dep_count    INT        NOT NULL CONSTRAINT df_scheduler_job_dep_count DEFAULT 0,
    dep_waiting  INT        NOT NULL CONSTRAINT df_scheduler_job_dep_waiting DEFAULT 0,
    dep_children INT        NOT NULL CONSTRAINT df_scheduler_job_dep_children DEFAULT 0;
GO
ALTER TABLE scheduler_job_archive ADD
    workflow_id  BINARY(16) NULL,
    dep_count    INT        NOT NULL CONSTRAINT df_scheduler_job_archive_dep_count DEFAULT 0,
    dep_waiting  INT        NOT NULL CONSTRAINT df_scheduler_job_archive_dep_waiting DEFAULT 0,
    dep_children INT        NOT NULL CONSTRAINT df_scheduler_job_archive_dep_children DEFAULT 0;
GO

-- A workflow's jobs, for its status and its cancellation.
CREATE INDEX idx_scheduler_job_workflow
    ON scheduler_job (workflow_id, job_id)
    WHERE workflow_id IS NOT NULL;
GO

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
    cond_name     VARBINARY(255) NULL,
    cond_args     VARBINARY(MAX) NULL,
    parent_status VARCHAR(16)    NULL,
    CONSTRAINT pk_scheduler_job_dep PRIMARY KEY (child_id, parent_id)
);
GO

-- A finishing parent finds its children.
CREATE INDEX idx_scheduler_job_dep_parent ON scheduler_job_dep (parent_id);
GO

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (8, SYSUTCDATETIME());
