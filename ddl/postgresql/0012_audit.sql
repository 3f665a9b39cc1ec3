-- Ratchet for Go: PostgreSQL schema, version 12: the audit log.
--
-- What operators did to jobs and schedules (spi.AuditLog: the dashboard's
-- and the CLI's actions), one row per action: seq is the entry's number,
-- given by the database (an identity column: unique, growing, and never
-- given again, even after its row is deleted); audit_time is when the
-- action was taken, actor who took it, audit_action what it was, target
-- what it was done to, audit_count how many jobs it changed, detail free
-- text. An empty target or detail is NULL. The text bounds (in bytes:
-- actor 200, action 100, target and detail 2000) are checked by
-- spi.AuditEntry.Validate before any write. The listing reads the primary
-- key backwards; the retention deletes the oldest entries by
-- (audit_time, seq) through idx_scheduler_audit_time.
-- Same conventions as 0001_init.sql.
CREATE TABLE scheduler_audit (
    seq          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    audit_time   timestamptz NOT NULL,
    actor        text        NOT NULL,
    audit_action text        NOT NULL,
    target       text,
    audit_count  bigint      NOT NULL,
    detail       text
);

CREATE INDEX idx_scheduler_audit_time ON scheduler_audit (audit_time, seq);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (12, now());
