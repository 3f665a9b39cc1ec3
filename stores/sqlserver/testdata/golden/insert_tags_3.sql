INSERT INTO scheduler_job_tag (job_id, tag) VALUES (@p1, @p2), (@p3, @p4), (@p5, @p6)
