SELECT p.prop_key, p.prop_value FROM scheduler_job j
	LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id AND SUBSTR(p.prop_key, 1, LENGTH(:1)) = :2
	WHERE j.job_id = :3
