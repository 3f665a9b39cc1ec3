UPDATE scheduler_schedule SET task_name = @p1, definition = @p2, paused = @p3, next_fire_time = @p4, updated_time = @p5,
		version = version + 1
	WHERE schedule_id = @p6 AND version = @p7
