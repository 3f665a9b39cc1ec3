DELETE FROM scheduler_stats_sample WHERE sample_minute < @p1
