SELECT persisted, sealed, outcome FROM scheduler_batch WHERE batch_id = :1
