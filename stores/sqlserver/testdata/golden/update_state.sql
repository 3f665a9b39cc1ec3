UPDATE scheduler_job_state SET state_json = @p3, version = version + 1
	WHERE job_id = @p1 AND namespace = @p2 AND version = @p4
