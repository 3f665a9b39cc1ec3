SELECT job_id, claim_seq FROM scheduler_job
	WHERE status = 'RUNNING' AND job_id IN (:1, :2)
