SELECT job_id, namespace, state_json FROM scheduler_job_state WHERE job_id IN (@p1, @p2) ORDER BY job_id, namespace
