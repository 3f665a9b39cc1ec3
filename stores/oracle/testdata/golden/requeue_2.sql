UPDATE scheduler_job SET status = 'PENDING', scheduled_time = :1, owner_node = NULL, claim_seq = claim_seq + 1, crash_count = crash_count + 1
	WHERE status = 'RUNNING' AND job_id IN (:2, :3)
