BEGIN
	UPDATE scheduler_job SET status = 'SUCCEEDED', finished_time = :1, job_result = :2, result_type = NULL
	WHERE status = 'RUNNING' AND job_id = :3 AND claim_seq = :4;
	UPDATE scheduler_job SET status = 'PENDING', scheduled_time = :5, attempts = :6, last_error = NULL, owner_node = NULL
	WHERE status = 'RUNNING' AND job_id = :7 AND claim_seq = :8;
	UPDATE scheduler_job SET status = 'FAILED', finished_time = :9, attempts = :10, last_error = NULL
	WHERE status = 'RUNNING' AND job_id = :11 AND claim_seq = :12;
END;
