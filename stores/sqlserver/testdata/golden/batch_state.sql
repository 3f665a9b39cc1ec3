SELECT persisted, sealed, outcome FROM scheduler_batch WHERE batch_id = @p1
