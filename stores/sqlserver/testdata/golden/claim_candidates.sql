SELECT * FROM (SELECT TOP (@p1) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p2 AND x.priority = 4 AND x.scheduled_time <= @p3
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p4) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p5 AND x.priority = 3 AND x.scheduled_time <= @p6
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p7) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p8 AND x.priority = 2 AND x.scheduled_time <= @p9
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p10) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p11 AND x.priority = 1 AND x.scheduled_time <= @p12
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p13) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p14 AND x.priority = 0 AND x.scheduled_time <= @p15
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id) c
