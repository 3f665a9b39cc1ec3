UPDATE scheduler_job SET status = 'CANCELLED', finished_time = :1
	WHERE job_id = :2 AND status IN ('PENDING', 'BLOCKED', 'WAITING')
