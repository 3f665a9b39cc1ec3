SELECT c4.* FROM OPENJSON(@p3) WITH (name NVARCHAR(255) '$') AS t CROSS APPLY (
		SELECT TOP (@p2) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
		WHERE x.status = 'PENDING' AND x.task_name = t.name AND x.priority = 4 AND x.scheduled_time <= @p1
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		ORDER BY x.scheduled_time, x.job_id) AS c4
UNION ALL
SELECT c3.* FROM OPENJSON(@p3) WITH (name NVARCHAR(255) '$') AS t CROSS APPLY (
		SELECT TOP (@p2) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
		WHERE x.status = 'PENDING' AND x.task_name = t.name AND x.priority = 3 AND x.scheduled_time <= @p1
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		ORDER BY x.scheduled_time, x.job_id) AS c3
UNION ALL
SELECT c2.* FROM OPENJSON(@p3) WITH (name NVARCHAR(255) '$') AS t CROSS APPLY (
		SELECT TOP (@p2) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
		WHERE x.status = 'PENDING' AND x.task_name = t.name AND x.priority = 2 AND x.scheduled_time <= @p1
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		ORDER BY x.scheduled_time, x.job_id) AS c2
UNION ALL
SELECT c1.* FROM OPENJSON(@p3) WITH (name NVARCHAR(255) '$') AS t CROSS APPLY (
		SELECT TOP (@p2) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
		WHERE x.status = 'PENDING' AND x.task_name = t.name AND x.priority = 1 AND x.scheduled_time <= @p1
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		ORDER BY x.scheduled_time, x.job_id) AS c1
UNION ALL
SELECT c0.* FROM OPENJSON(@p3) WITH (name NVARCHAR(255) '$') AS t CROSS APPLY (
		SELECT TOP (@p2) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
		WHERE x.status = 'PENDING' AND x.task_name = t.name AND x.priority = 0 AND x.scheduled_time <= @p1
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		ORDER BY x.scheduled_time, x.job_id) AS c0
