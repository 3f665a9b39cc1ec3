UPDATE scheduler_job_signal SET outcome = 'DELIVERED', payload = :1, resolved_at = :2
	WHERE job_id = :3 AND outcome IS NULL
