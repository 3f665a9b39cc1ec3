INSERT INTO scheduler_job_state (job_id, namespace, state_json, version) VALUES (:1, :2, :3, 0)
