UPDATE scheduler_job SET status = 'FAILED', last_error = :1, finished_time = :2, owner_node = NULL, claim_seq = claim_seq + 1
	WHERE status = 'RUNNING' AND job_id = :3 AND claim_seq = :4
