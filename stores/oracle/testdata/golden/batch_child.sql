SELECT j.job_id FROM scheduler_job j WHERE j.workflow_id = :1 AND j.status IN ('PENDING', 'RUNNING', 'BLOCKED', 'WAITING') FETCH FIRST :2 ROWS ONLY
