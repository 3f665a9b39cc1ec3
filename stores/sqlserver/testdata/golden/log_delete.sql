DELETE FROM scheduler_job_log WHERE job_id IN (@p1) AND logged_time < @p2
