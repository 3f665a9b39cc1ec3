SELECT status FROM scheduler_job WHERE job_id = :1
