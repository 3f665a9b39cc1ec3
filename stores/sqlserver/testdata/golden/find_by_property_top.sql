SELECT TOP (@p1) job_id FROM scheduler_job_property WHERE prop_key = @p2 AND prop_value = @p3 ORDER BY job_id
