SELECT job_id, name, signal_key, payload FROM scheduler_job_signal WHERE job_id IN (:1, :2) AND payload IS NOT NULL ORDER BY job_id
