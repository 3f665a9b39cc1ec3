-- Ratchet for Go: Oracle schema, version 3: task-aware claims.
--
-- A node claims only jobs of the tasks it has registered, so that nodes
-- running different task sets (a rolling deploy that adds a task) share a
-- database. The claim index is led by the task after the status: each
-- claim reads, per task it runs and priority level, one range in
-- (scheduled_time, job_id) order, and a backlog of a task that no claimer
-- lists is never read. Same conventions as 0001_init.sql: idempotent
-- statements (a rerun drops and rebuilds the index).
DROP INDEX IF EXISTS idx_scheduler_job_claim;

CREATE INDEX IF NOT EXISTS idx_scheduler_job_claim
    ON scheduler_job (status, task_name, priority, scheduled_time, job_id);

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 3, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 3);
