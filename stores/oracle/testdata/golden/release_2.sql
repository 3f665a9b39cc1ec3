UPDATE scheduler_job SET status = 'PENDING', owner_node = NULL, scheduled_time = :1, claim_seq = claim_seq + 1
	WHERE status = 'RUNNING' AND job_id IN (:2, :3)
