UPDATE scheduler_batch SET persisted = :1, sealed = :2
	WHERE batch_id = :3 AND persisted = :4 AND sealed = 0 AND outcome IS NULL
