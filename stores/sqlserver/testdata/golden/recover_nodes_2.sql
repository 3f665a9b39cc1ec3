UPDATE j SET
		j.status = CASE WHEN j.crash_count < @p3 THEN 'PENDING' ELSE 'FAILED' END,
		j.crash_count = CASE WHEN j.crash_count < @p3 THEN j.crash_count + 1 ELSE j.crash_count END,
		j.scheduled_time = CASE WHEN j.crash_count < @p3 THEN @p1 ELSE j.scheduled_time END,
		j.last_error = CASE WHEN j.crash_count < @p3 THEN j.last_error ELSE @p4 END,
		j.finished_time = CASE WHEN j.crash_count < @p3 THEN j.finished_time ELSE @p1 END,
		j.claim_seq = j.claim_seq + 1,
		j.owner_node = NULL
	OUTPUT inserted.job_id, inserted.task_name, deleted.owner_node, inserted.status, inserted.crash_count
	FROM scheduler_job AS j WITH (ROWLOCK)
	WHERE j.status = 'RUNNING' AND (j.owner_node IN (@p5, @p6) OR NOT EXISTS (SELECT 1 FROM scheduler_node n
		WHERE n.node_id = j.owner_node AND n.heartbeat_ts >= @p2))
