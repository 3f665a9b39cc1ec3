UPDATE scheduler_job SET payload = @p1 WHERE job_id = @p2 AND payload = @p3
