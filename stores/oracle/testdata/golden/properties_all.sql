SELECT p.prop_key, p.prop_value FROM scheduler_job j
	LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id
	WHERE j.job_id = :1
