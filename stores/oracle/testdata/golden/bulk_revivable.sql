SELECT DISTINCT parent_id FROM scheduler_job_dep WHERE parent_status IS NOT NULL AND parent_id IN (:1, :2)
