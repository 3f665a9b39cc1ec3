UPDATE scheduler_job SET status = 'CANCELLED', finished_time = :1
	WHERE status = 'PENDING' AND job_id IN (:2, :3)
