SELECT workflow_id, status, COUNT(*) FROM scheduler_job WHERE workflow_id IN (@p1, @p2) GROUP BY workflow_id, status
