INSERT INTO scheduler_job_state (job_id, namespace, state_json, version)
	SELECT :1, :2, :3, 0 FROM DUAL
	WHERE NOT EXISTS (SELECT 1 FROM scheduler_job_state WHERE job_id = :4 AND namespace = :5)
