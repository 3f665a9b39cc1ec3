UPDATE scheduler_job SET status = 'PENDING', last_error = NULL, attempts = @p1, crash_count = @p2, scheduled_time = @p3, finished_time = NULL, owner_node = NULL
	WHERE status = 'FAILED' AND job_id IN (@p4, @p5)
