UPDATE scheduler_job SET status = 'FAILED', last_error = @p2, finished_time = @p1,
		claim_seq = claim_seq + 1, owner_node = NULL
	WHERE status = 'RUNNING' AND job_id IN (@p3, @p4)
