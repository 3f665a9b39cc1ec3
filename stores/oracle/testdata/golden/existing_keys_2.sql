SELECT idempotency_key, job_id FROM scheduler_job WHERE idempotency_key IN (:1, :2)
