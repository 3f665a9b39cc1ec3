UPDATE scheduler_job_signal SET outcome = 'CANCELLED', resolved_at = @p1 WHERE job_id = @p2 AND outcome IS NULL
