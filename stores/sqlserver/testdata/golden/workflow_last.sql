SELECT TOP (@p1) workflow_id FROM scheduler_job WHERE workflow_id < @p2 ORDER BY workflow_id DESC
