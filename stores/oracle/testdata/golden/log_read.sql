SELECT claim_seq, line, run, logged_time, log_level, message FROM scheduler_job_log
	WHERE job_id = :1 AND (claim_seq > :2 OR (claim_seq = :3 AND line > :4))
	ORDER BY claim_seq, line FETCH FIRST :5 ROWS ONLY
