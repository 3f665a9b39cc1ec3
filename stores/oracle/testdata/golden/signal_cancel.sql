UPDATE scheduler_job_signal SET outcome = 'CANCELLED', resolved_at = :1 WHERE job_id = :2 AND outcome IS NULL
