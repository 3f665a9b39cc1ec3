UPDATE scheduler_job SET status = 'CANCELLED', finished_time = @p1
	WHERE status IN ('PENDING', 'BLOCKED', 'WAITING') AND job_id = @p2
