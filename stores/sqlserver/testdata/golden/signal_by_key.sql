SELECT TOP (@p1) job_id FROM scheduler_job_signal WHERE signal_key = @p2 AND name = @p3 AND outcome IS NULL ORDER BY job_id
