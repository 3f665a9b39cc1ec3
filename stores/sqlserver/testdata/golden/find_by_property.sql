SELECT job_id FROM scheduler_job_property WHERE prop_key = @p1 AND prop_value = @p2 ORDER BY job_id
