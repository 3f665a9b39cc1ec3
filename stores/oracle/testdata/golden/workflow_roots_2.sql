SELECT j.workflow_id, j.task_name, j.created_time FROM scheduler_job j WHERE j.workflow_id IN (:1, :2)
	AND NOT EXISTS (SELECT 1 FROM scheduler_job k WHERE k.workflow_id = j.workflow_id AND k.job_id < j.job_id)
