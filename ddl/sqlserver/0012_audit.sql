-- Ratchet for Go: SQL Server schema, version 12: the audit log.
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
-- The seq is an IDENTITY.
-- NVARCHAR counts UTF-16 code units, never more than the UTF-8 bytes of
-- the same text, so the bounds fit. Same conventions as 0001_init.sql;
-- batches separated by GO.
CREATE TABLE scheduler_audit (
    seq          BIGINT IDENTITY(1, 1) NOT NULL,
    audit_time   DATETIME2(6)   NOT NULL,
    actor        NVARCHAR(200)  NOT NULL,
    audit_action NVARCHAR(100)  NOT NULL,
    target       NVARCHAR(2000) NULL,
    audit_count  BIGINT         NOT NULL,
    detail       NVARCHAR(2000) NULL,
    CONSTRAINT pk_scheduler_audit PRIMARY KEY (seq)
);
GO

CREATE INDEX idx_scheduler_audit_time ON scheduler_audit (audit_time, seq);
GO

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (12, SYSUTCDATETIME());
