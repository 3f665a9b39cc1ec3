SELECT job_id, name, signal_key, deadline, outcome, payload,
		CASE WHEN payload IS NULL THEN 1 ELSE 0 END, resolved_at
	FROM scheduler_job_signal WHERE job_id IN (@p1, @p2)
