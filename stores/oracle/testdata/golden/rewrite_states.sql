SELECT job_id, namespace, state_json FROM scheduler_job_state WHERE job_id IN (:1, :2) ORDER BY job_id, namespace
