SELECT owner FROM scheduler_lease WHERE name = :1
