SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :1 AND x.priority = 4 AND x.scheduled_time <= :2
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :3)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :4 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :5 AND x.priority = 3 AND x.scheduled_time <= :6
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :7)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :8 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :9 AND x.priority = 2 AND x.scheduled_time <= :10
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :11)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :12 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :13 AND x.priority = 1 AND x.scheduled_time <= :14
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :15)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :16 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :17 AND x.priority = 0 AND x.scheduled_time <= :18
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :19)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :20 ROWS ONLY) c
