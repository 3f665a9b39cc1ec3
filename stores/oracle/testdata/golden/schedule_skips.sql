SELECT from_time, to_time, slots, recorded_time FROM scheduler_schedule_skip WHERE schedule_id = :1 ORDER BY from_time DESC FETCH FIRST :2 ROWS ONLY
