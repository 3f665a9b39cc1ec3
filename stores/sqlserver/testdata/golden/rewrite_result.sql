UPDATE scheduler_job SET job_result = @p1 WHERE job_id = @p2 AND job_result = @p3
