SELECT TOP (@p1) schedule_id, task_name, definition, paused, next_fire_time, last_fire_time, last_job_id,
	skipped_count, version, created_time, updated_time FROM scheduler_schedule WHERE schedule_id > @p2 ORDER BY schedule_id
