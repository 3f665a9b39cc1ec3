UPDATE scheduler_job_log SET message = @p1 WHERE job_id = @p2 AND claim_seq = @p3 AND line = @p4 AND message = @p5
