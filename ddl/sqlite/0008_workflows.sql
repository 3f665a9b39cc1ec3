-- Ratchet for Go: SQLite schema, version 8: workflows.
--
-- A job of a workflow names it (workflow_id), counts its dependencies
-- (dep_count), how many of them have not finished (dep_waiting: BLOCKED
-- while above zero) and the jobs that depend on it (dep_children: zero
-- for a job no finish has to look further than). The write that finishes
-- a parent records its state on its dependencies and decrements each
-- child's dep_waiting in the same transaction (SQLite's writers take
-- turns). The archive's copy gets the same columns, in the same order.
-- Same conventions as 0001_init.sql.
ALTER TABLE scheduler_job ADD COLUMN workflow_id TEXT;
ALTER TABLE scheduler_job ADD COLUMN dep_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE scheduler_job ADD COLUMN dep_waiting INTEGER NOT NULL DEFAULT 0;
ALTER TABLE scheduler_job ADD COLUMN dep_children INTEGER NOT NULL DEFAULT 0;
ALTER TABLE scheduler_job_archive ADD COLUMN workflow_id TEXT;
ALTER TABLE scheduler_job_archive ADD COLUMN dep_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE scheduler_job_archive ADD COLUMN dep_waiting INTEGER NOT NULL DEFAULT 0;
ALTER TABLE scheduler_job_archive ADD COLUMN dep_children INTEGER NOT NULL DEFAULT 0;

-- A workflow's jobs, for its status and its cancellation.
CREATE INDEX idx_scheduler_job_workflow
    ON scheduler_job (workflow_id, job_id)
    WHERE workflow_id IS NOT NULL;

-- One row per dependency, in the order they were submitted (position).
-- allow_mask is the spi.Allow of the dependency; cond_name and cond_args
-- its workflow condition (NULL for none); parent_status the state the
-- parent finished in (NULL until it has). No foreign key: a dependency
-- lives as long as its child, and goes when the child is archived (a
-- parent is archived only once its children have finished).
CREATE TABLE scheduler_job_dep (
    child_id      TEXT    NOT NULL,
    parent_id     TEXT    NOT NULL,
    position      INTEGER NOT NULL,
    allow_mask    INTEGER NOT NULL,
    cond_name     TEXT,
    cond_args     BLOB,
    parent_status TEXT,
    PRIMARY KEY (child_id, parent_id)
);

-- A finishing parent finds its children.
CREATE INDEX idx_scheduler_job_dep_parent ON scheduler_job_dep (parent_id);

INSERT INTO ratchet_schema_version (version, applied_at)
VALUES (8, CAST(strftime('%s', 'now') AS INTEGER) * 1000000);
