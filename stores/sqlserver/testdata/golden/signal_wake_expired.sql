UPDATE scheduler_job SET status = 'PENDING', scheduled_time = @p1
	WHERE status = 'WAITING' AND job_id = @p2 AND EXISTS (SELECT 1 FROM scheduler_job_signal g WHERE g.job_id = @p3 AND g.outcome IS NULL)
