SELECT s.state_json, s.version FROM scheduler_job j
	LEFT JOIN scheduler_job_state s ON s.job_id = j.job_id AND s.namespace = @p1
	WHERE j.job_id = @p2
