DELETE FROM scheduler_job_signal WHERE job_id IN (@p1, @p2)
