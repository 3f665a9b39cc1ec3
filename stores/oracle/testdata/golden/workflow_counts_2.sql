SELECT workflow_id, status, COUNT(*) FROM scheduler_job WHERE workflow_id IN (:1, :2) GROUP BY workflow_id, status
