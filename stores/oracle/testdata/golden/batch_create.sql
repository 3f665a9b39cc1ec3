INSERT INTO scheduler_batch (batch_id, name, created_time, on_success, on_failure, persisted, sealed)
	VALUES (:1, :2, :3, :4, :5, :6, :7)
