UPDATE scheduler_schedule SET next_fire_time = :1, skipped_count = skipped_count + :2, updated_time = :3, last_fire_time = :4, last_job_id = :5, version = version + 1
	WHERE schedule_id = :6 AND version = :7
