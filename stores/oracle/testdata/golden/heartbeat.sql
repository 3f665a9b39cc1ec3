MERGE INTO scheduler_node n
	USING (SELECT CAST(:1 AS VARCHAR2(255 CHAR)) AS node_id, CAST(:2 AS TIMESTAMP(6)) AS ts FROM DUAL) s
	ON (n.node_id = s.node_id)
	WHEN MATCHED THEN UPDATE SET n.heartbeat_ts = s.ts
	WHEN NOT MATCHED THEN INSERT (node_id, heartbeat_ts) VALUES (s.node_id, s.ts)
