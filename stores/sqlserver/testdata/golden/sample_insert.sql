INSERT INTO scheduler_stats_sample (sample_minute, counts) VALUES (@p1, @p2)
