-- Ratchet for Go: SQL Server schema, version 1 (SQL Server 2022 or later).
--
-- Plain T-SQL with no templating and no schema-qualified names: apply it
-- with the store (Options.ApplyMigrations), with the `ratchet migrate`
-- command, or with Flyway / Liquibase / sqlcmd, on a connection whose
-- database and default schema hold the Ratchet tables. Batches are
-- separated by lines holding only GO (the sqlcmd convention, which Flyway
-- and Liquibase understand too): a batch that adds a column must end
-- before a batch that indexes it. The store's migrator runs all batches of
-- one file in one transaction that holds an application lock.
--
-- Conventions of this dialect:
--   * times are DATETIME2(6) in UTC (microsecond precision); NULL means "not
--     set";
--   * durations are BIGINT microseconds;
--   * job ids are BINARY(16), the UUID's bytes in their usual order, so that
--     the order of job_id is the byte order of the UUIDs (UUIDv7: creation
--     order). UNIQUEIDENTIFIER is not used: SQL Server sorts it by its last
--     six bytes first, which would break paging by id;
--   * payloads and results are VARBINARY(MAX), so they round-trip byte for
--     byte (JSON or an encryption envelope);
--   * names that are compared or unique (idempotency keys, tags, node ids,
--     resources, lease names, namespaces, property keys and values) are
--     VARBINARY holding their UTF-8 bytes: compared byte for byte, with no
--     case folding and no trailing-space padding, whatever the collation;
--   * other text is NVARCHAR;
--   * params are a JSON object of strings in an NVARCHAR(MAX) column.

CREATE TABLE scheduler_job (
    job_id           BINARY(16)     NOT NULL,
    task_name        NVARCHAR(255)  NOT NULL,
    payload          VARBINARY(MAX) NULL,
    status           VARCHAR(16)    NOT NULL,
    priority         INT            NOT NULL CONSTRAINT df_scheduler_job_priority DEFAULT 2,
    scheduled_time   DATETIME2(6)   NOT NULL,
    created_time     DATETIME2(6)   NULL,
    attempts         INT            NOT NULL CONSTRAINT df_scheduler_job_attempts DEFAULT 0,
    max_retries      INT            NOT NULL CONSTRAINT df_scheduler_job_max_retries DEFAULT 3,
    backoff_kind     VARCHAR(16)    NOT NULL CONSTRAINT df_scheduler_job_backoff_kind DEFAULT 'NONE',
    backoff_param_us BIGINT         NOT NULL CONSTRAINT df_scheduler_job_backoff_param DEFAULT 0,
    claim_seq        BIGINT         NOT NULL CONSTRAINT df_scheduler_job_claim_seq DEFAULT 0,
    crash_count      INT            NOT NULL CONSTRAINT df_scheduler_job_crash_count DEFAULT 0,
    owner_node       VARBINARY(255) NULL,
    claimed_time     DATETIME2(6)   NULL,
    finished_time    DATETIME2(6)   NULL,
    last_error       NVARCHAR(MAX)  NULL,
    job_result       VARBINARY(MAX) NULL,
    result_type      NVARCHAR(255)  NULL,
    idempotency_key  VARBINARY(450) NULL,
    params           NVARCHAR(MAX)  NULL,
    CONSTRAINT pk_scheduler_job PRIMARY KEY CLUSTERED (job_id)
);

-- The claim takes, for each priority level, the first due PENDING jobs in
-- (scheduled_time, job_id) order: one range scan of this filtered index per
-- level, read WITH (UPDLOCK, READPAST, ROWLOCK). Only PENDING rows are in
-- it, so it stays as small as the backlog. (The statements compare status
-- with literals, so that the optimizer can match the filter.)
CREATE INDEX idx_scheduler_job_claim
    ON scheduler_job (priority, scheduled_time, job_id)
    WHERE status = 'PENDING';

-- Idempotency keys are unique. Most jobs have none, so the filtered index
-- holds only the jobs that do (a plain UNIQUE constraint would allow one
-- NULL only).
CREATE UNIQUE INDEX uq_scheduler_job_idempotency_key
    ON scheduler_job (idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- Orphan recovery reads the RUNNING jobs and their owners.
CREATE INDEX idx_scheduler_job_owner
    ON scheduler_job (owner_node)
    WHERE status = 'RUNNING';

-- The dead-letter queue, listed by id (ListJobs with status FAILED).
CREATE INDEX idx_scheduler_job_failed
    ON scheduler_job (job_id)
    WHERE status = 'FAILED';

-- Tags live in their own table so that tag affinity compiles to
-- EXISTS / NOT EXISTS.
CREATE TABLE scheduler_job_tag (
    job_id BINARY(16)     NOT NULL,
    tag    VARBINARY(255) NOT NULL,
    CONSTRAINT pk_scheduler_job_tag PRIMARY KEY (job_id, tag),
    CONSTRAINT fk_scheduler_job_tag_job FOREIGN KEY (job_id)
        REFERENCES scheduler_job (job_id) ON DELETE CASCADE
);

CREATE INDEX idx_scheduler_job_tag_tag
    ON scheduler_job_tag (tag, job_id);

-- One row per live worker node; orphan recovery compares heartbeat_ts with
-- now minus the grace period.
CREATE TABLE scheduler_node (
    node_id      VARBINARY(255) NOT NULL,
    heartbeat_ts DATETIME2(6)   NOT NULL,
    CONSTRAINT pk_scheduler_node PRIMARY KEY (node_id)
);

-- The migrations applied to this database, one row per version. Every
-- migration file records its own version last, so a schema applied by an
-- external tool is recognised by the store.
CREATE TABLE ratchet_schema_version (
    version    INT          NOT NULL,
    applied_at DATETIME2(6) NOT NULL,
    CONSTRAINT pk_ratchet_schema_version PRIMARY KEY (version)
);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (1, SYSUTCDATETIME());
