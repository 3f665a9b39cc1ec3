SELECT version FROM scheduler_job_state WHERE job_id = :1 AND namespace = :2
