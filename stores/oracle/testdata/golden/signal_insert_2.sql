INSERT INTO scheduler_job_signal (job_id, name, signal_key, deadline) VALUES (:1, :2, :3, :4), (:5, :6, :7, :8)
