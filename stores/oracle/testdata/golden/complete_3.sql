BEGIN
	UPDATE scheduler_job SET status = 'SUCCEEDED', finished_time = :1, job_result = :2, result_type = :3
	WHERE job_id = :4 AND claim_seq = :5 AND status = 'RUNNING';
	UPDATE scheduler_job SET status = 'PENDING', scheduled_time = :6, attempts = :7, last_error = :8, owner_node = NULL
	WHERE job_id = :9 AND claim_seq = :10 AND status = 'RUNNING';
	UPDATE scheduler_job SET status = 'FAILED', finished_time = :11, attempts = :12, last_error = :13
	WHERE job_id = :14 AND claim_seq = :15 AND status = 'RUNNING';
END;
