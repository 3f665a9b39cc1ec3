UPDATE scheduler_batch SET outcome = 'FAILED', finished_time = :1, callback_id = NULL
	WHERE batch_id = :2 AND outcome IS NULL AND sealed = 1
