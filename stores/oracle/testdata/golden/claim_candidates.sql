SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :1 AND x.priority = 4 AND x.scheduled_time <= :2
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :3 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :4 AND x.priority = 3 AND x.scheduled_time <= :5
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :6 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :7 AND x.priority = 2 AND x.scheduled_time <= :8
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :9 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :10 AND x.priority = 1 AND x.scheduled_time <= :11
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :12 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :13 AND x.priority = 0 AND x.scheduled_time <= :14
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :15 ROWS ONLY) c
