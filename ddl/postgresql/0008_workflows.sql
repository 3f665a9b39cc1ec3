-- Ratchet for Go: PostgreSQL schema, version 8: workflows.
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
ALTER TABLE scheduler_job ADD COLUMN workflow_id uuid;
ALTER TABLE scheduler_job ADD COLUMN dep_count integer NOT NULL DEFAULT 0;
ALTER TABLE scheduler_job ADD COLUMN dep_waiting integer NOT NULL DEFAULT 0;
ALTER TABLE scheduler_job ADD COLUMN dep_children integer NOT NULL DEFAULT 0;
ALTER TABLE scheduler_job_archive ADD COLUMN workflow_id uuid;
ALTER TABLE scheduler_job_archive ADD COLUMN dep_count integer NOT NULL DEFAULT 0;
ALTER TABLE scheduler_job_archive ADD COLUMN dep_waiting integer NOT NULL DEFAULT 0;
ALTER TABLE scheduler_job_archive ADD COLUMN dep_children integer NOT NULL DEFAULT 0;

-- A workflow's jobs, for its status and its cancellation; jobs of no
-- workflow are not in it.
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
    child_id      uuid    NOT NULL,
    parent_id     uuid    NOT NULL,
    position      integer NOT NULL,
    allow_mask    integer NOT NULL,
    cond_name     text,
    cond_args     bytea,
    parent_status text,
    PRIMARY KEY (child_id, parent_id)
);

-- A finishing parent finds its children.
CREATE INDEX idx_scheduler_job_dep_parent ON scheduler_job_dep (parent_id);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (8, now());
