UPDATE scheduler_job SET payload = EMPTY_BLOB() WHERE job_id IN (:1, :2)
