UPDATE scheduler_job_log SET message = :1 WHERE job_id = :2 AND claim_seq = :3 AND line = :4 AND DBMS_LOB.COMPARE(message, :5) = 0
