SELECT TOP (@p1) from_time, to_time, slots, recorded_time FROM scheduler_schedule_skip WHERE schedule_id = @p2 ORDER BY from_time DESC
