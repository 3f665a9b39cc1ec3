SELECT TOP (@p1) seq, audit_time, actor, audit_action, target, audit_count, detail FROM scheduler_audit WHERE seq < @p2 ORDER BY seq DESC
