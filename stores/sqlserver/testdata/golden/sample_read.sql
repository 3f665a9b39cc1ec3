SELECT TOP (@p1) sample_minute, counts FROM scheduler_stats_sample WHERE sample_minute >= @p2 ORDER BY sample_minute
