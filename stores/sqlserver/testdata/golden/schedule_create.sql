INSERT INTO scheduler_schedule (schedule_id, task_name, definition, paused, next_fire_time, last_fire_time, last_job_id,
	skipped_count, version, created_time, updated_time)
	VALUES (@p1, @p2, @p3, @p4, @p5, NULL, NULL, 0, 1, @p6, @p7)
