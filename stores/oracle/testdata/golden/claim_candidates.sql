SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.priority = 4 AND x.scheduled_time <= :1
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :2 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.priority = 3 AND x.scheduled_time <= :3
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :4 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.priority = 2 AND x.scheduled_time <= :5
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :6 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.priority = 1 AND x.scheduled_time <= :7
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :8 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.priority = 0 AND x.scheduled_time <= :9
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :10 ROWS ONLY)
