UPDATE scheduler_job SET status = 'CANCELLED', finished_time = @p1
	WHERE job_id = @p2 AND status IN ('PENDING', 'BLOCKED', 'WAITING')
