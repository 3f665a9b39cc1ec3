UPDATE scheduler_job SET status = 'PENDING', last_error = NULL, attempts = 0, crash_count = 0,
		scheduled_time = @p1, finished_time = NULL, owner_node = NULL
	WHERE status = 'FAILED' AND job_id IN (@p2, @p3)
