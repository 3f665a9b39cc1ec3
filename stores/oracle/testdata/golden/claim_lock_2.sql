SELECT job_id FROM scheduler_job WHERE job_id IN (:1, :2) AND status = 'PENDING' FOR UPDATE SKIP LOCKED
