DELETE FROM scheduler_node WHERE node_id = @p1
