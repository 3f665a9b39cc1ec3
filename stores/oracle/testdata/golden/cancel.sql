UPDATE scheduler_job SET status = 'CANCELLED', finished_time = :1
	WHERE status IN ('PENDING', 'BLOCKED', 'WAITING') AND job_id = :2
