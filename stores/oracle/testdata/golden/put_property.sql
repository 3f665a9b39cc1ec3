INSERT INTO scheduler_job_property (job_id, prop_key, prop_value)
	SELECT j.job_id, :1, :2 FROM scheduler_job j WHERE j.job_id = :3
	AND NOT EXISTS (SELECT 1 FROM scheduler_job_property p WHERE p.job_id = j.job_id AND p.prop_key = :4)
