UPDATE scheduler_job SET status = 'PENDING', crash_count = crash_count + 1, scheduled_time = :1,
		claim_seq = claim_seq + 1, owner_node = NULL
	WHERE status = 'RUNNING' AND job_id IN (:2, :3)
