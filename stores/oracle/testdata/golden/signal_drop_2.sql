DELETE FROM scheduler_job_signal WHERE job_id IN (:1, :2)
