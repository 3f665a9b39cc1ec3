DELETE FROM scheduler_job_log WHERE job_id IN (:1) AND logged_time < :2
