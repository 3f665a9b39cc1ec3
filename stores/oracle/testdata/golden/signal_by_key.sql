SELECT job_id FROM scheduler_job_signal WHERE signal_key = :1 AND name = :2 AND outcome IS NULL ORDER BY job_id FETCH FIRST :3 ROWS ONLY
