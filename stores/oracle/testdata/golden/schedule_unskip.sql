DELETE FROM scheduler_schedule_skip WHERE schedule_id = :1
