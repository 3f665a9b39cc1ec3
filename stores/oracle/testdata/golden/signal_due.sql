SELECT job_id FROM scheduler_job_signal WHERE outcome IS NULL AND deadline IS NOT NULL AND deadline <= :1 ORDER BY deadline, job_id FETCH FIRST :2 ROWS ONLY
