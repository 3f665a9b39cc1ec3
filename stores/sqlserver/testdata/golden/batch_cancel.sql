UPDATE scheduler_batch SET outcome = 'CANCELLED', finished_time = @p1, sealed = 1 WHERE batch_id = @p2 AND outcome IS NULL
