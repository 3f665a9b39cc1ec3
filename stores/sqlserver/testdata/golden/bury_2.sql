UPDATE scheduler_job SET status = 'FAILED', last_error = @p1, finished_time = @p2, owner_node = NULL, claim_seq = claim_seq + 1
	WHERE status = 'RUNNING' AND job_id IN (@p3, @p4)
