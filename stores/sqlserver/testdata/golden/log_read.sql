SELECT TOP (@p1) claim_seq, line, run, logged_time, log_level, message FROM scheduler_job_log
	WHERE job_id = @p2 AND (claim_seq > @p3 OR (claim_seq = @p4 AND line > @p5))
	ORDER BY claim_seq, line
