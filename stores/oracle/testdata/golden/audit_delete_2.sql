DELETE FROM scheduler_audit WHERE seq IN (:1, :2) AND audit_time < :3
