SELECT job_id, status, dep_children FROM scheduler_job WITH (UPDLOCK, ROWLOCK) WHERE status IN ('PENDING', 'BLOCKED', 'WAITING', 'RUNNING') AND job_id IN (@p1, @p2) ORDER BY job_id
