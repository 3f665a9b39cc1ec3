SELECT TOP (@p1) job_id FROM scheduler_job_log WHERE logged_time < @p2
