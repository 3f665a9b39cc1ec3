INSERT INTO scheduler_job_state (job_id, namespace, state_json, version)
	SELECT @p1, @p2, @p3, 0
	WHERE NOT EXISTS (SELECT 1 FROM scheduler_job_state WITH (UPDLOCK, HOLDLOCK) WHERE job_id = @p1 AND namespace = @p2)
