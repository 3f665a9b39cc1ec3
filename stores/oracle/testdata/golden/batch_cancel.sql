UPDATE scheduler_batch SET outcome = 'CANCELLED', finished_time = :1, sealed = 1 WHERE batch_id = :2 AND outcome IS NULL
