-- Ratchet for Go: MySQL / MariaDB schema, version 12: the audit log.
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
-- The seq is AUTO_INCREMENT: InnoDB keeps its counter across restarts.
-- Same conventions as 0001_init.sql.
CREATE TABLE scheduler_audit (
    seq          BIGINT        NOT NULL AUTO_INCREMENT,
    audit_time   DATETIME(6)   NOT NULL,
    actor        VARCHAR(200)  NOT NULL,
    audit_action VARCHAR(100)  NOT NULL,
    target       VARCHAR(2000),
    audit_count  BIGINT        NOT NULL,
    detail       VARCHAR(2000),
    PRIMARY KEY (seq),
    KEY idx_scheduler_audit_time (audit_time, seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (12, UTC_TIMESTAMP(6));
