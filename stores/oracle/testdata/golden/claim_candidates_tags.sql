SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.priority = 4 AND x.scheduled_time <= :1
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:2, :3)) = :4
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:5))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:6))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :7 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.priority = 3 AND x.scheduled_time <= :8
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:9, :10)) = :11
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:12))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:13))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :14 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.priority = 2 AND x.scheduled_time <= :15
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:16, :17)) = :18
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:19))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:20))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :21 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.priority = 1 AND x.scheduled_time <= :22
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:23, :24)) = :25
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:26))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:27))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :28 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.priority = 0 AND x.scheduled_time <= :29
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:30, :31)) = :32
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:33))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:34))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :35 ROWS ONLY)
