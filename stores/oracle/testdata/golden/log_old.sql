SELECT job_id FROM scheduler_job_log WHERE logged_time < :1 FETCH FIRST :2 ROWS ONLY
