INSERT INTO scheduler_schedule_skip (schedule_id, from_time, to_time, slots, recorded_time) VALUES (:1, :2, :3, :4, :5)
