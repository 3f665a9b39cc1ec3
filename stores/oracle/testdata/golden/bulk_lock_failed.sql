SELECT job_id FROM scheduler_job WHERE status = 'FAILED' AND job_id IN (:1, :2) ORDER BY job_id FOR UPDATE
