SELECT TOP (@p1) job_id FROM scheduler_job_signal WHERE outcome IS NULL AND deadline IS NOT NULL AND deadline <= @p2 ORDER BY deadline, job_id
