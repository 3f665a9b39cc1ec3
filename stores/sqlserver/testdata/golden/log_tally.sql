SELECT COUNT(*), MAX(CASE WHEN claim_seq = @p1 THEN line END) FROM scheduler_job_log WHERE job_id = @p2
