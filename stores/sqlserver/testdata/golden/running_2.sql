SELECT job_id, claim_seq FROM scheduler_job WITH (UPDLOCK, ROWLOCK)
	WHERE status = 'RUNNING' AND job_id IN (@p1, @p2) ORDER BY job_id
