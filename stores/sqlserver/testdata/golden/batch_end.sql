UPDATE scheduler_batch SET outcome = 'SUCCEEDED', finished_time = @p1, callback_id = @p2
	WHERE batch_id = @p3 AND outcome IS NULL AND sealed = 1
