SELECT job_id, claim_seq, line, message FROM scheduler_job_log WHERE job_id IN (:1, :2) ORDER BY job_id, claim_seq, line
