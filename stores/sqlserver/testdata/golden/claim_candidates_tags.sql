SELECT * FROM (SELECT TOP (@p1) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p2 AND x.priority = 4 AND x.scheduled_time <= @p3
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p4)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p5, @p6)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p7)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p8)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p9) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p10 AND x.priority = 3 AND x.scheduled_time <= @p11
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p12)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p13, @p14)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p15)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p16)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p17) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p18 AND x.priority = 2 AND x.scheduled_time <= @p19
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p20)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p21, @p22)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p23)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p24)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p25) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p26 AND x.priority = 1 AND x.scheduled_time <= @p27
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p28)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p29, @p30)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p31)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p32)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p33) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p34 AND x.priority = 0 AND x.scheduled_time <= @p35
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p36)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p37, @p38)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p39)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p40)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p41) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p42 AND x.priority = 4 AND x.scheduled_time <= @p43
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p44)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p45, @p46)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p47)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p48)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p49) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p50 AND x.priority = 3 AND x.scheduled_time <= @p51
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p52)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p53, @p54)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p55)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p56)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p57) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p58 AND x.priority = 2 AND x.scheduled_time <= @p59
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p60)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p61, @p62)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p63)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p64)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p65) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p66 AND x.priority = 1 AND x.scheduled_time <= @p67
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p68)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p69, @p70)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p71)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p72)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
UNION ALL
SELECT * FROM (SELECT TOP (@p73) x.job_id, x.priority, x.scheduled_time, x.resource_name, x.resource_limit
	FROM scheduler_job x WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE x.status = 'PENDING' AND x.task_name = @p74 AND x.priority = 0 AND x.scheduled_time <= @p75
		AND NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p76)
		AND (x.resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
			WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < x.resource_limit)
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p77, @p78)) = 2
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p79)) > 0
		AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p80)) = 0
	ORDER BY x.scheduled_time, x.job_id) c
