DELETE FROM scheduler_node WHERE heartbeat_ts < @p1 OR node_id IN (@p2, @p3)
