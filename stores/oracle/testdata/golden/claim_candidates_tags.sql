SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :1 AND x.priority = 4 AND x.scheduled_time <= :2
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :3)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:4, :5)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:6)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:7)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :8 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :9 AND x.priority = 3 AND x.scheduled_time <= :10
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :11)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:12, :13)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:14)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:15)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :16 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :17 AND x.priority = 2 AND x.scheduled_time <= :18
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :19)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:20, :21)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:22)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:23)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :24 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :25 AND x.priority = 1 AND x.scheduled_time <= :26
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :27)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:28, :29)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:30)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:31)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :32 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :33 AND x.priority = 0 AND x.scheduled_time <= :34
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :35)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:36, :37)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:38)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:39)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :40 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :41 AND x.priority = 4 AND x.scheduled_time <= :42
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :43)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:44, :45)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:46)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:47)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :48 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :49 AND x.priority = 3 AND x.scheduled_time <= :50
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :51)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:52, :53)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:54)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:55)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :56 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :57 AND x.priority = 2 AND x.scheduled_time <= :58
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :59)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:60, :61)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:62)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:63)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :64 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :65 AND x.priority = 1 AND x.scheduled_time <= :66
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :67)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:68, :69)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:70)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:71)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :72 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :73 AND x.priority = 0 AND x.scheduled_time <= :74
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :75)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:76, :77)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:78)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:79)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :80 ROWS ONLY) c
