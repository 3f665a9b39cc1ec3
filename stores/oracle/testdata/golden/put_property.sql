INSERT INTO scheduler_job_property (job_id, prop_key, prop_value)
	SELECT j.job_id, :1, :2 FROM scheduler_job j WHERE j.job_id = :3
