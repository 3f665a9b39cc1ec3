UPDATE scheduler_schedule SET next_fire_time = @p1, skipped_count = skipped_count + @p2, updated_time = @p3, last_fire_time = @p4, last_job_id = @p5, version = version + 1
	WHERE schedule_id = @p6 AND version = @p7
