SELECT status, COUNT(*) FROM scheduler_job WHERE workflow_id = @p1 GROUP BY status
