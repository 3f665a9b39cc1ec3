SELECT DISTINCT task_name FROM scheduler_job WHERE status = 'PENDING'
