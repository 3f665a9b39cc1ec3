INSERT INTO scheduler_audit (audit_time, actor, audit_action, target, audit_count, detail) VALUES (:1, :2, :3, :4, :5, :6) RETURNING seq INTO :7
