UPDATE scheduler_job_archive SET job_result = @p1 WHERE job_id = @p2 AND job_result = @p3
