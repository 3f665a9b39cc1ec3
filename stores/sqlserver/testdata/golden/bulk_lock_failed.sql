SELECT job_id FROM scheduler_job WITH (UPDLOCK, ROWLOCK) WHERE status = 'FAILED' AND job_id IN (@p1, @p2) ORDER BY job_id
