UPDATE scheduler_job SET status = 'FAILED', last_error = @p1, finished_time = @p2, owner_node = NULL
	WHERE status = 'PENDING' AND job_id = @p3
