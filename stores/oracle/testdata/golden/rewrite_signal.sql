UPDATE scheduler_job_signal SET payload = :1 WHERE job_id = :2 AND DBMS_LOB.COMPARE(payload, :3) = 0
