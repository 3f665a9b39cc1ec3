UPDATE scheduler_batch SET outcome = 'FAILED', finished_time = @p1, callback_id = NULL
	WHERE batch_id = @p2 AND outcome IS NULL AND sealed = 1
