SELECT TOP (@p1) batch_id, name, created_time, on_success, on_failure, persisted, sealed, outcome, finished_time, callback_id FROM scheduler_batch WHERE batch_id < @p2 ORDER BY batch_id DESC
