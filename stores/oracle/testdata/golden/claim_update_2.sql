UPDATE scheduler_job SET status = 'RUNNING', owner_node = :1, claim_seq = claim_seq + 1, claimed_time = :2
	WHERE status = 'PENDING' AND job_id IN (:3, :4)
