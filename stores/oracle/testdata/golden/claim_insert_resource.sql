INSERT INTO scheduler_resource (resource_name) VALUES (:1)
