UPDATE scheduler_schedule SET task_name = :1, definition = :2, paused = :3, next_fire_time = :4, updated_time = :5,
		version = version + 1
	WHERE schedule_id = :6 AND version = :7
