SELECT j.task_name, j.priority, g.name FROM scheduler_job j JOIN scheduler_job_signal g ON g.job_id = j.job_id WHERE j.job_id = @p1
