SELECT * FROM (SELECT TOP (@p1) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p2 AND x.priority = 4 AND x.scheduled_time <= @p3
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p4, @p5)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p6)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p7)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p8) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p9 AND x.priority = 3 AND x.scheduled_time <= @p10
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p11, @p12)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p13)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p14)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p15) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p16 AND x.priority = 2 AND x.scheduled_time <= @p17
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p18, @p19)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p20)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p21)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p22) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p23 AND x.priority = 1 AND x.scheduled_time <= @p24
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p25, @p26)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p27)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p28)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p29) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p30 AND x.priority = 0 AND x.scheduled_time <= @p31
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p32, @p33)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p34)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p35)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p36) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p37 AND x.priority = 4 AND x.scheduled_time <= @p38
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p39, @p40)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p41)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p42)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p43) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p44 AND x.priority = 3 AND x.scheduled_time <= @p45
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p46, @p47)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p48)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p49)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p50) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p51 AND x.priority = 2 AND x.scheduled_time <= @p52
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p53, @p54)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p55)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p56)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p57) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p58 AND x.priority = 1 AND x.scheduled_time <= @p59
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p60, @p61)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p62)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p63)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p64) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p65 AND x.priority = 0 AND x.scheduled_time <= @p66
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p67, @p68)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p69)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p70)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
