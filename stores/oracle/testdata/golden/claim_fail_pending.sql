UPDATE scheduler_job SET status = 'FAILED', owner_node = NULL, finished_time = :1, last_error = :2
	WHERE job_id = :3 AND status = 'PENDING'
