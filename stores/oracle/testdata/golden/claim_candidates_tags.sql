SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.task_name = :1 AND x.priority = 4 AND x.scheduled_time <= :2
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:3, :4)) = :5
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:6))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:7))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :8 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.task_name = :9 AND x.priority = 3 AND x.scheduled_time <= :10
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:11, :12)) = :13
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:14))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:15))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :16 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.task_name = :17 AND x.priority = 2 AND x.scheduled_time <= :18
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:19, :20)) = :21
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:22))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:23))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :24 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.task_name = :25 AND x.priority = 1 AND x.scheduled_time <= :26
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:27, :28)) = :29
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:30))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:31))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :32 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.task_name = :33 AND x.priority = 0 AND x.scheduled_time <= :34
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:35, :36)) = :37
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:38))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:39))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :40 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.task_name = :41 AND x.priority = 4 AND x.scheduled_time <= :42
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:43, :44)) = :45
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:46))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:47))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :48 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.task_name = :49 AND x.priority = 3 AND x.scheduled_time <= :50
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:51, :52)) = :53
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:54))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:55))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :56 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.task_name = :57 AND x.priority = 2 AND x.scheduled_time <= :58
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:59, :60)) = :61
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:62))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:63))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :64 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.task_name = :65 AND x.priority = 1 AND x.scheduled_time <= :66
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:67, :68)) = :69
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:70))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:71))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :72 ROWS ONLY)
UNION ALL
SELECT * FROM (
		SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
		FROM scheduler_job x
		WHERE x.status = 'PENDING' AND x.task_name = :73 AND x.priority = 0 AND x.scheduled_time <= :74
			AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:75, :76)) = :77
			AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:78))
			AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:79))
		ORDER BY x.scheduled_time, x.job_id
		FETCH FIRST :80 ROWS ONLY)
