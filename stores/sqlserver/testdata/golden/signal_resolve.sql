UPDATE scheduler_job_signal SET outcome = 'DELIVERED', payload = @p1, resolved_at = @p2
	WHERE job_id = @p3 AND outcome IS NULL
