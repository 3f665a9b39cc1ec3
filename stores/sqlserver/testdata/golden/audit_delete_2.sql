DELETE FROM scheduler_audit WHERE seq IN (@p1, @p2) AND audit_time < @p3
