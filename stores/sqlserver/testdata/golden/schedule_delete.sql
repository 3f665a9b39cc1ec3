DELETE FROM scheduler_schedule WHERE schedule_id = @p1
