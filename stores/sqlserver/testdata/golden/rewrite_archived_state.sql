UPDATE scheduler_job_archive_state SET state_json = @p1 WHERE job_id = @p2 AND namespace = @p3 AND state_json = @p4
