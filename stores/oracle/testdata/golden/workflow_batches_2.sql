SELECT batch_id FROM scheduler_batch WHERE batch_id IN (:1, :2)
