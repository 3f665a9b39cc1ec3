UPDATE scheduler_job_signal SET payload = @p1 WHERE job_id = @p2 AND payload = @p3
