UPDATE scheduler_job SET status = 'FAILED', last_error = :1, finished_time = :2, owner_node = NULL
	WHERE status = 'PENDING' AND job_id = :3
