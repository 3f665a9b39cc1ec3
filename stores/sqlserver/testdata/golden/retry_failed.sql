UPDATE scheduler_job SET status = 'PENDING', last_error = NULL, attempts = @p1, crash_count = @p2, snoozes = @p3, scheduled_time = @p4, finished_time = NULL, owner_node = NULL
	WHERE status = 'FAILED' AND job_id = @p5
