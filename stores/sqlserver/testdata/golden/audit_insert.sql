INSERT INTO scheduler_audit (audit_time, actor, audit_action, target, audit_count, detail) OUTPUT INSERTED.seq VALUES (@p1, @p2, @p3, @p4, @p5, @p6)
