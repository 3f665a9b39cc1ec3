INSERT INTO scheduler_batch (batch_id, name, created_time, on_success, on_failure, persisted, sealed)
	VALUES (@p1, @p2, @p3, @p4, @p5, @p6, @p7)
