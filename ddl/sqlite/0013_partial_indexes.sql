-- Ratchet for Go: SQLite schema, version 13: the job indexes hold only the
-- rows their reads look for, as PostgreSQL's partial indexes do.
--
-- Before this version the claim index held every job, led by its status:
-- each claim moved an entry from the PENDING range to the RUNNING range,
-- each completion from RUNNING to its end status, and the entries of
-- finished jobs stayed until they were archived. Now the claim index
-- holds the PENDING jobs only (a claim deletes an entry, a completion
-- touches none of it), the reads of the RUNNING, FAILED and WAITING
-- jobs have small indexes of their own, and the counts of the other
-- statuses one that a claim leaves alone. The statements test the status as
-- a literal ('PENDING'), which is what lets SQLite use a partial index.
-- Same conventions as 0001_init.sql.
DROP INDEX idx_scheduler_job_claim;

CREATE INDEX idx_scheduler_job_claim
    ON scheduler_job (task_name, priority, scheduled_time, job_id)
    WHERE status = 'PENDING';

-- Orphan recovery reads the RUNNING jobs and their owners in id order,
-- and so does ListJobs with status RUNNING.
CREATE INDEX idx_scheduler_job_running
    ON scheduler_job (job_id, owner_node)
    WHERE status = 'RUNNING';

-- The dead-letter queue, listed by id (ListJobs with status FAILED).
CREATE INDEX idx_scheduler_job_failed
    ON scheduler_job (job_id)
    WHERE status = 'FAILED';

-- ListJobs with status WAITING pages by id.
CREATE INDEX idx_scheduler_job_waiting
    ON scheduler_job (job_id)
    WHERE status = 'WAITING';

-- The gauges count the jobs by status, task and priority (JobStats):
-- the PENDING ones through the claim index, the RUNNING ones through
-- theirs, and the finished, blocked and waiting ones through this index,
-- which a claim leaves alone and a completion adds one entry to.
CREATE INDEX idx_scheduler_job_settled
    ON scheduler_job (status, task_name, priority)
    WHERE status NOT IN ('PENDING', 'RUNNING');

INSERT INTO ratchet_schema_version (version, applied_at)
VALUES (13, CAST(strftime('%s', 'now') AS INTEGER) * 1000000);
