UPDATE scheduler_job SET status = 'PENDING', scheduled_time = :1
	WHERE status = 'WAITING' AND job_id = :2 AND EXISTS (SELECT 1 FROM scheduler_job_signal g WHERE g.job_id = :3 AND g.outcome IS NULL)
