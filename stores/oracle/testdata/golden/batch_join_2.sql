UPDATE scheduler_job SET workflow_id = :1 WHERE job_id IN (:2, :3)
