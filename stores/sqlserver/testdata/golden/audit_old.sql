SELECT TOP (@p1) seq FROM scheduler_audit WHERE audit_time < @p2 ORDER BY audit_time, seq
