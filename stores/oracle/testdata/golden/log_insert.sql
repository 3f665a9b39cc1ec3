INSERT INTO scheduler_job_log (job_id, claim_seq, line, run, logged_time, log_level, message) VALUES (:1, :2, :3, :4, :5, :6, :7)
