DELETE FROM scheduler_node WHERE node_id = :1
