SELECT p.prop_key, p.prop_value FROM scheduler_job j
	LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id
		AND SUBSTRING(p.prop_key, 1, DATALENGTH(@p2)) = @p2
	WHERE j.job_id = @p1
