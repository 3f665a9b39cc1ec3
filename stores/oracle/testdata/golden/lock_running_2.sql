SELECT job_id, claim_seq FROM scheduler_job WHERE job_id IN (:1, :2) AND status = 'RUNNING' ORDER BY job_id FOR UPDATE
