-- Ratchet for Go: Oracle schema, version 12: the audit log.
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
-- The seq's identity is ORDER: in order across the instances of a RAC
-- too.
-- An empty target or detail is NULL here anyway, as Oracle stores every
-- empty string. Same conventions as 0001_init.sql: plain SQL, unqualified
-- names, idempotent statements.
CREATE TABLE IF NOT EXISTS scheduler_audit (
    seq          NUMBER(19) GENERATED ALWAYS AS IDENTITY (ORDER) NOT NULL,
    audit_time   TIMESTAMP(6)        NOT NULL,
    actor        VARCHAR2(200 CHAR)  NOT NULL,
    audit_action VARCHAR2(100 CHAR)  NOT NULL,
    target       VARCHAR2(2000 CHAR),
    audit_count  NUMBER(19)          NOT NULL,
    detail       VARCHAR2(2000 CHAR),
    CONSTRAINT pk_scheduler_audit PRIMARY KEY (seq)
);

CREATE INDEX IF NOT EXISTS idx_scheduler_audit_time ON scheduler_audit (audit_time, seq);

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 12, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 12);
