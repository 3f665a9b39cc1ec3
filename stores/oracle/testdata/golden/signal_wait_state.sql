SELECT j.status, g.name, g.outcome, g.payload, g.resolved_at FROM scheduler_job j
	LEFT JOIN scheduler_job_signal g ON g.job_id = j.job_id WHERE j.job_id = :1
