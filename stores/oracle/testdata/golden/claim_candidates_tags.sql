SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :1 AND x.priority = 4 AND x.scheduled_time <= :2
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:3, :4)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:5)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:6)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :7 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :8 AND x.priority = 3 AND x.scheduled_time <= :9
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:10, :11)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:12)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:13)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :14 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :15 AND x.priority = 2 AND x.scheduled_time <= :16
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:17, :18)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:19)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:20)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :21 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :22 AND x.priority = 1 AND x.scheduled_time <= :23
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:24, :25)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:26)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:27)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :28 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :29 AND x.priority = 0 AND x.scheduled_time <= :30
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:31, :32)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:33)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:34)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :35 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :36 AND x.priority = 4 AND x.scheduled_time <= :37
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:38, :39)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:40)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:41)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :42 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :43 AND x.priority = 3 AND x.scheduled_time <= :44
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:45, :46)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:47)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:48)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :49 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :50 AND x.priority = 2 AND x.scheduled_time <= :51
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:52, :53)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:54)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:55)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :56 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :57 AND x.priority = 1 AND x.scheduled_time <= :58
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:59, :60)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:61)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:62)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :63 ROWS ONLY) c
UNION ALL
SELECT * FROM (SELECT x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x
	WHERE x.status = 'PENDING' AND x.task_name = :64 AND x.priority = 0 AND x.scheduled_time <= :65
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:66, :67)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:68)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (:69)) = 0
	ORDER BY x.scheduled_time, x.job_id FETCH FIRST :70 ROWS ONLY) c
