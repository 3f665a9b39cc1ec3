INSERT INTO scheduler_job_log (job_id, claim_seq, line, run, logged_time, log_level, message) VALUES (@p1, @p2, @p3, @p4, @p5, @p6, @p7)
