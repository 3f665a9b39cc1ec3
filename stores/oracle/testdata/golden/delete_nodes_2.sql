DELETE FROM scheduler_node WHERE heartbeat_ts < :1 OR node_id IN (:2, :3)
