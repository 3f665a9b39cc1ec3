SELECT job_id FROM scheduler_job_property WHERE prop_key = :1 AND prop_value IS NULL ORDER BY job_id FETCH FIRST :2 ROWS ONLY
