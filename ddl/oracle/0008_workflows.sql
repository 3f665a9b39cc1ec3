-- Ratchet for Go: Oracle schema, version 8: workflows.
--
-- A job of a workflow names it (workflow_id), counts its dependencies
-- (dep_count), how many of them have not finished (dep_waiting: BLOCKED
-- while above zero) and the jobs that depend on it (dep_children: zero
-- for a job no finish has to look further than). The write that finishes
-- a parent records its state on its dependencies and decrements each
-- child's dep_waiting in the same transaction: the row lock on the child
-- serializes two parents finishing at once, so exactly one of them
-- releases it. The archive's copy gets the same columns, in the same
-- order. Same conventions as 0001_init.sql: idempotent statements.
BEGIN
    EXECUTE IMMEDIATE 'ALTER TABLE scheduler_job ADD (workflow_id RAW(16), dep_count NUMBER(10) DEFAULT 0 NOT NULL, dep_waiting NUMBER(10) DEFAULT 0 NOT NULL, dep_children NUMBER(10) DEFAULT 0 NOT NULL)';
EXCEPTION
    WHEN OTHERS THEN
        IF SQLCODE != -1430 THEN
            RAISE;
        END IF;
END;
/

BEGIN
    EXECUTE IMMEDIATE 'ALTER TABLE scheduler_job_archive ADD (workflow_id RAW(16), dep_count NUMBER(10) DEFAULT 0 NOT NULL, dep_waiting NUMBER(10) DEFAULT 0 NOT NULL, dep_children NUMBER(10) DEFAULT 0 NOT NULL)';
EXCEPTION
    WHEN OTHERS THEN
        IF SQLCODE != -1430 THEN
            RAISE;
        END IF;
END;
/

-- A workflow's jobs, for its status and its cancellation.
CREATE INDEX IF NOT EXISTS idx_scheduler_job_workflow
    ON scheduler_job (workflow_id, job_id);

-- One row per dependency, in the order they were submitted (position).
-- allow_mask is the spi.Allow of the dependency; cond_name and cond_args
-- its workflow condition (NULL for none); parent_status the state the
-- parent finished in (NULL until it has). No foreign key: a dependency
-- lives as long as its child, and goes when the child is archived (a
-- parent is archived only once its children have finished).
CREATE TABLE IF NOT EXISTS scheduler_job_dep (
    child_id      RAW(16)            NOT NULL,
    parent_id     RAW(16)            NOT NULL,
    position      NUMBER(10)         NOT NULL,
    allow_mask    NUMBER(10)         NOT NULL,
    cond_name     VARCHAR2(255 CHAR),
    cond_args     BLOB,
    parent_status VARCHAR2(16),
    CONSTRAINT pk_scheduler_job_dep PRIMARY KEY (child_id, parent_id)
);

-- A finishing parent finds its children.
CREATE INDEX IF NOT EXISTS idx_scheduler_job_dep_parent ON scheduler_job_dep (parent_id);

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 8, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 8);
