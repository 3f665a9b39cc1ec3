UPDATE scheduler_job SET status = 'FAILED', owner_node = NULL, finished_time = @p1, last_error = @p2
	WHERE job_id = @p3 AND status = 'PENDING'
