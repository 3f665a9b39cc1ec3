UPDATE scheduler_job_state SET state_json = :1, version = version + 1
	WHERE job_id = :2 AND namespace = :3 AND version = :4
