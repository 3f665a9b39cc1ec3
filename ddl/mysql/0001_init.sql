-- Ratchet for Go: MySQL / MariaDB schema, version 1 (MySQL 8.0 or later,
-- MariaDB 10.6 or later; InnoDB).
--
-- Plain SQL with no templating and no database-qualified names: apply it
-- with the store (Options.ApplyMigrations), with the `ratchet migrate`
-- command, or with Flyway / Liquibase, on a connection whose current
-- database is the one that holds the Ratchet tables. MySQL commits every
-- DDL statement on its own, so a migration cannot run in one transaction:
-- the store's migrator serializes migrators with GET_LOCK and applies the
-- statements one by one.
--
-- Conventions of this dialect:
--   * times are DATETIME(6) in UTC (microsecond precision); NULL means "not
--     set";
--   * durations are BIGINT microseconds;
--   * job ids are BINARY(16), the UUID's bytes, so that the order of job_id
--     is the byte order of the UUIDs (UUIDv7: creation order);
--   * payloads and results are LONGBLOB, so they round-trip byte for byte
--     (JSON or an encryption envelope);
--   * names that are compared or unique (idempotency keys, tags, node ids)
--     are VARBINARY: compared byte for byte, with no case folding and no
--     trailing-space padding, whatever the server's default collation;
--   * other text is utf8mb4 with the binary collation;
--   * params are a JSON object of strings in a TEXT column.

CREATE TABLE scheduler_job (
    job_id           BINARY(16)     NOT NULL,
    task_name        VARCHAR(255)   NOT NULL,
    payload          LONGBLOB,
    status           VARCHAR(16)    NOT NULL,
    priority         INT            NOT NULL DEFAULT 2,
    scheduled_time   DATETIME(6)    NOT NULL,
    created_time     DATETIME(6),
    attempts         INT            NOT NULL DEFAULT 0,
    max_retries      INT            NOT NULL DEFAULT 3,
    backoff_kind     VARCHAR(16)    NOT NULL DEFAULT 'NONE',
    backoff_param_us BIGINT         NOT NULL DEFAULT 0,
    claim_seq        BIGINT         NOT NULL DEFAULT 0,
    crash_count      INT            NOT NULL DEFAULT 0,
    owner_node       VARBINARY(255),
    claimed_time     DATETIME(6),
    finished_time    DATETIME(6),
    last_error       TEXT,
    job_result       LONGBLOB,
    result_type      VARCHAR(255),
    idempotency_key  VARBINARY(255),
    params           TEXT,
    PRIMARY KEY (job_id),
    -- Idempotency keys are unique; NULLs (jobs without a key) never clash.
    UNIQUE KEY uq_scheduler_job_idempotency_key (idempotency_key),
    -- The claim takes, for each priority level, the first due PENDING jobs
    -- in (scheduled_time, job_id) order: one range scan of this index per
    -- level. MySQL has no partial indexes, so status leads the key.
    KEY idx_scheduler_job_claim (status, priority, scheduled_time, job_id),
    -- Orphan recovery reads the RUNNING jobs and their owners.
    KEY idx_scheduler_job_owner (status, owner_node),
    -- ListJobs with a status (the dead-letter queue: FAILED) pages by id.
    KEY idx_scheduler_job_status (status, job_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Tags live in their own table so that tag affinity compiles to
-- EXISTS / NOT EXISTS.
CREATE TABLE scheduler_job_tag (
    job_id BINARY(16)     NOT NULL,
    tag    VARBINARY(255) NOT NULL,
    PRIMARY KEY (job_id, tag),
    KEY idx_scheduler_job_tag_tag (tag, job_id),
    CONSTRAINT fk_scheduler_job_tag_job FOREIGN KEY (job_id)
        REFERENCES scheduler_job (job_id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- One row per live worker node; orphan recovery compares heartbeat_ts with
-- now minus the grace period.
CREATE TABLE scheduler_node (
    node_id      VARBINARY(255) NOT NULL,
    heartbeat_ts DATETIME(6)    NOT NULL,
    PRIMARY KEY (node_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The migrations applied to this database, one row per version. Every
-- migration file records its own version last, so a schema applied by an
-- external tool is recognised by the store.
CREATE TABLE ratchet_schema_version (
    version    INT         NOT NULL,
    applied_at DATETIME(6) NOT NULL,
    PRIMARY KEY (version)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (1, UTC_TIMESTAMP(6));
