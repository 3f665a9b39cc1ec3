INSERT INTO scheduler_job_property (job_id, prop_key, prop_value) VALUES (:1, :2, :3)
