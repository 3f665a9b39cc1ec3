SELECT * FROM (SELECT TOP (@p1) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p2 AND x.priority = 4 AND x.scheduled_time <= @p3
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p4)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p5) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p6 AND x.priority = 3 AND x.scheduled_time <= @p7
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p8)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p9) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p10 AND x.priority = 2 AND x.scheduled_time <= @p11
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p12)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p13) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p14 AND x.priority = 1 AND x.scheduled_time <= @p15
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p16)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p17) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p18 AND x.priority = 0 AND x.scheduled_time <= @p19
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p20)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id) c
