-- Ratchet for Go: PostgreSQL schema, version 3: task-aware claims.
--
-- A node claims only jobs of the tasks it has registered, so that nodes
-- running different task sets (a rolling deploy that adds a task) share a
-- database. The claim index is led by the task: each claim reads, per task
-- it runs and priority level, one range in (scheduled_time, job_id) order,
-- and a backlog of a task that no claimer lists is never read. Same
-- conventions as 0001_init.sql.
DROP INDEX idx_scheduler_job_claim;

CREATE INDEX idx_scheduler_job_claim
    ON scheduler_job (task_name, priority, scheduled_time, job_id)
    WHERE status = 'PENDING';

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (3, now());
