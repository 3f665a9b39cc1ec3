INSERT INTO scheduler_job_property (job_id, prop_key, prop_value)
	SELECT j.job_id, @p2, @p3 FROM scheduler_job j
	WHERE j.job_id = @p1 AND NOT EXISTS (SELECT 1 FROM scheduler_job_property p WITH (UPDLOCK, HOLDLOCK)
		WHERE p.job_id = @p1 AND p.prop_key = @p2)
