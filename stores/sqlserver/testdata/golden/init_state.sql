INSERT INTO scheduler_job_state (job_id, namespace, state_json, version) VALUES (@p1, @p2, @p3, 0)
