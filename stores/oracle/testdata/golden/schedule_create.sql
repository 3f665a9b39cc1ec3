INSERT INTO scheduler_schedule (schedule_id, task_name, definition, paused, next_fire_time, last_fire_time, last_job_id,
	skipped_count, version, created_time, updated_time)
	VALUES (:1, :2, :3, :4, :5, NULL, NULL, 0, 1, :6, :7)
