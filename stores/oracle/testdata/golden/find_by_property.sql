SELECT job_id FROM scheduler_job_property WHERE prop_key = :1 AND prop_value = :2 ORDER BY job_id
