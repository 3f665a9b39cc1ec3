SELECT child_id, parent_id, cond_args FROM scheduler_job_dep WHERE child_id IN (:1, :2) AND cond_args IS NOT NULL ORDER BY child_id, position
