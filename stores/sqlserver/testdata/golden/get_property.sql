SELECT p.prop_key, p.prop_value FROM scheduler_job j
	LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id AND p.prop_key = @p1
	WHERE j.job_id = @p2
