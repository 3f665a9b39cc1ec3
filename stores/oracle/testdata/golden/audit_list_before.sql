SELECT seq, audit_time, actor, audit_action, target, audit_count, detail FROM scheduler_audit WHERE seq < :1 ORDER BY seq DESC FETCH FIRST :2 ROWS ONLY
