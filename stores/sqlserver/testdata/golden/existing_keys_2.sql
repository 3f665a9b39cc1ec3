SELECT idempotency_key, job_id FROM scheduler_job WITH (UPDLOCK, HOLDLOCK) WHERE idempotency_key IN (@p1, @p2)
