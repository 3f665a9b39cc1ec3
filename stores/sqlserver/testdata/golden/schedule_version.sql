SELECT version FROM scheduler_schedule WHERE schedule_id = @p1
