UPDATE scheduler_job SET status = 'FAILED', last_error = :1, finished_time = :2,
		claim_seq = claim_seq + 1, owner_node = NULL
	WHERE status = 'RUNNING' AND job_id IN (:3, :4)
