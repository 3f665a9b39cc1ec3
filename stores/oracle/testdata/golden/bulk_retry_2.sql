UPDATE scheduler_job SET status = 'PENDING', last_error = NULL, attempts = :1, crash_count = :2, scheduled_time = :3, finished_time = NULL, owner_node = NULL
	WHERE status = 'FAILED' AND job_id IN (:4, :5)
