SELECT resource_name FROM scheduler_resource WHERE resource_name = :1 FOR UPDATE
