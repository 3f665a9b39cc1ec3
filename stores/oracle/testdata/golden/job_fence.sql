SELECT status, claim_seq FROM scheduler_job WHERE job_id = :1 FOR UPDATE
