UPDATE scheduler_node WITH (UPDLOCK, SERIALIZABLE) SET heartbeat_ts = @p2 WHERE node_id = @p1;
IF @@ROWCOUNT = 0 INSERT INTO scheduler_node (node_id, heartbeat_ts) VALUES (@p1, @p2);
