SELECT job_id, payload, job_result FROM scheduler_job WHERE job_id > :1 ORDER BY job_id FETCH FIRST :2 ROWS ONLY
