SELECT j.job_id, j.task_name, j.owner_node, j.crash_count, j.priority
	FROM scheduler_job j
	WHERE j.status = 'RUNNING' AND (NOT EXISTS (SELECT 1 FROM scheduler_node n
		WHERE n.node_id = j.owner_node AND n.heartbeat_ts >= :1))
	ORDER BY j.job_id FOR UPDATE
