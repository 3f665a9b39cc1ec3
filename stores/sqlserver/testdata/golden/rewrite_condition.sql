UPDATE scheduler_job_dep SET cond_args = @p1 WHERE child_id = @p2 AND parent_id = @p3 AND cond_args = @p4
