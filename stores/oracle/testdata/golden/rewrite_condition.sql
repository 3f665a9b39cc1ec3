UPDATE scheduler_job_dep SET cond_args = :1 WHERE child_id = :2 AND parent_id = :3 AND DBMS_LOB.COMPARE(cond_args, :4) = 0
