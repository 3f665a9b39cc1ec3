DELETE FROM scheduler_lease WHERE name = @p1 AND owner = @p2
