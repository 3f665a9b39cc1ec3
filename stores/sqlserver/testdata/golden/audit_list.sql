SELECT TOP (@p1) seq, audit_time, actor, audit_action, target, audit_count, detail FROM scheduler_audit ORDER BY seq DESC
