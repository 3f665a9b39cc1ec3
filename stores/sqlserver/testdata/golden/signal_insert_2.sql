INSERT INTO scheduler_job_signal (job_id, name, signal_key, deadline) VALUES (@p1, @p2, @p3, @p4), (@p5, @p6, @p7, @p8)
