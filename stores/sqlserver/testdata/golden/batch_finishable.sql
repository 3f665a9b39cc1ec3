SELECT TOP (@p1) b.batch_id, b.name, b.on_success, b.on_failure FROM scheduler_batch b
	WHERE b.outcome IS NULL AND b.sealed = 1
		AND NOT EXISTS (SELECT 1 FROM scheduler_job j WHERE j.workflow_id = b.batch_id AND j.status IN ('PENDING', 'RUNNING', 'BLOCKED', 'WAITING'))
	ORDER BY b.batch_id
