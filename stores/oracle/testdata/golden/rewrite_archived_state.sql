UPDATE scheduler_job_archive_state SET state_json = :1 WHERE job_id = :2 AND namespace = :3 AND DBMS_LOB.COMPARE(state_json, :4) = 0
