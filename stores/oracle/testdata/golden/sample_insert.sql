INSERT INTO scheduler_stats_sample (sample_minute, counts) VALUES (:1, :2)
