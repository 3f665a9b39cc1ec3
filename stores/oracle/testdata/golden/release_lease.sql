DELETE FROM scheduler_lease WHERE name = :1 AND owner = :2
