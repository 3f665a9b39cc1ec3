UPDATE scheduler_job_archive SET job_result = :1 WHERE job_id = :2 AND DBMS_LOB.COMPARE(job_result, :3) = 0
