SELECT job_id, status, dep_children FROM scheduler_job WHERE status IN ('PENDING', 'BLOCKED', 'WAITING', 'RUNNING') AND job_id IN (:1, :2) ORDER BY job_id FOR UPDATE
