INSERT INTO scheduler_job_tag (job_id, tag) VALUES (:1, :2), (:3, :4)
