SELECT status, COUNT(*) FROM scheduler_job WHERE workflow_id = :1 GROUP BY status
