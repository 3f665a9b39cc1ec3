UPDATE scheduler_job SET status = 'CANCELLED', finished_time = @p1
	WHERE status = 'PENDING' AND job_id IN (@p2, @p3)
