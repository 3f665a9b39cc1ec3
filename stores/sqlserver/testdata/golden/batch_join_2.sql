UPDATE scheduler_job SET workflow_id = @p1 WHERE job_id IN (@p2, @p3)
