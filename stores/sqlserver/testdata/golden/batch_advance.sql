UPDATE scheduler_batch SET persisted = @p1, sealed = @p2
	WHERE batch_id = @p3 AND persisted = @p4 AND sealed = 0 AND outcome IS NULL
