SELECT batch_id FROM scheduler_batch WHERE batch_id IN (@p1, @p2)
