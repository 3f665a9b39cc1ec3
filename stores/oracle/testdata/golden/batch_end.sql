UPDATE scheduler_batch SET outcome = 'SUCCEEDED', finished_time = :1, callback_id = :2
	WHERE batch_id = :3 AND outcome IS NULL AND sealed = 1
