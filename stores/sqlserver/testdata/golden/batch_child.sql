SELECT TOP (@p1) j.job_id FROM scheduler_job j WHERE j.workflow_id = @p2 AND j.status IN ('PENDING', 'RUNNING', 'BLOCKED', 'WAITING')
