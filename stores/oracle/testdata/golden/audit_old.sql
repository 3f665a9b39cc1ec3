SELECT seq FROM scheduler_audit WHERE audit_time < :1 ORDER BY audit_time, seq FETCH FIRST :2 ROWS ONLY
