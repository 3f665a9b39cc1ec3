SELECT TOP (@p1) job_id, payload, job_result FROM scheduler_job WHERE job_id > @p2 ORDER BY job_id
