UPDATE scheduler_job_signal SET outcome = 'CANCELLED', resolved_at = :1
	WHERE outcome IS NULL AND job_id IN (SELECT job_id FROM scheduler_job WHERE workflow_id = :2 AND status = 'CANCELLED')
