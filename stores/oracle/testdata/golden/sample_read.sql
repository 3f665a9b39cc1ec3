SELECT sample_minute, counts FROM scheduler_stats_sample WHERE sample_minute >= :1 ORDER BY sample_minute FETCH FIRST :2 ROWS ONLY
