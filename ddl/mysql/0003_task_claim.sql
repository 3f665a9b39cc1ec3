-- Ratchet for Go: MySQL / MariaDB schema, version 3: task-aware claims.
--
-- A node claims only jobs of the tasks it has registered, so that nodes
-- running different task sets (a rolling deploy that adds a task) share a
-- database. The claim index is led by the task after the status: each
-- claim reads, per task it runs and priority level, one range in
-- (scheduled_time, job_id) order, and a backlog of a task that no claimer
-- lists is never read. One statement, so that the claim never runs
-- without its index. Same conventions as 0001_init.sql.
ALTER TABLE scheduler_job
    DROP KEY idx_scheduler_job_claim,
    ADD KEY idx_scheduler_job_claim (status, task_name, priority, scheduled_time, job_id);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (3, UTC_TIMESTAMP(6));
