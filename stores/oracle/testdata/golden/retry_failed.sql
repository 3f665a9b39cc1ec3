UPDATE scheduler_job SET status = 'PENDING', last_error = NULL, attempts = :1, crash_count = :2, snoozes = :3, scheduled_time = :4, finished_time = NULL, owner_node = NULL
	WHERE status = 'FAILED' AND job_id = :5
