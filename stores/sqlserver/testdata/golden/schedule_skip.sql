INSERT INTO scheduler_schedule_skip (schedule_id, from_time, to_time, slots, recorded_time) VALUES (@p1, @p2, @p3, @p4, @p5)
