-- Ratchet for Go: Oracle schema, version 1 (Oracle Database 23ai or later).
--
-- Plain SQL with no templating and no schema-qualified names: apply it with
-- the store (Options.ApplyMigrations), with the `ratchet migrate` command,
-- or with Flyway / Liquibase / SQL*Plus, as the user that owns the Ratchet
-- tables. Each statement ends with a semicolon at the end of a line; a
-- PL/SQL block ends with a line holding only a slash (the SQL*Plus
-- convention). Oracle commits every DDL statement on its own, so a
-- migration cannot run in one transaction: every statement is idempotent
-- (CREATE ... IF NOT EXISTS, guarded ALTERs, a version row inserted only
-- when missing), so that an interrupted or concurrent migration converges
-- when it runs again.
--
-- Conventions of this dialect:
--   * times are TIMESTAMP(6) in UTC (microsecond precision); NULL means
--     "not set";
--   * durations are NUMBER(19) microseconds;
--   * job ids are RAW(16), the UUID's bytes, so that the order of job_id is
--     the byte order of the UUIDs (UUIDv7: creation order);
--   * payloads and results are BLOBs, so they round-trip byte for byte
--     (JSON or an encryption envelope); an empty value is EMPTY_BLOB(),
--     distinct from NULL;
--   * text is VARCHAR2 with character length semantics (the database
--     character set should be AL32UTF8), compared byte for byte (binary
--     NLS_COMP, the default); long text (last errors, params) is a CLOB;
--   * Oracle stores the empty string as NULL: text columns that may hold
--     an empty string are nullable, and the store reads NULL back as "";
--   * params are a JSON object of strings in a CLOB.

CREATE TABLE IF NOT EXISTS scheduler_job (
    job_id           RAW(16)            NOT NULL,
    task_name        VARCHAR2(255 CHAR),
    payload          BLOB,
    status           VARCHAR2(16)       NOT NULL,
    priority         NUMBER(10)         DEFAULT 2 NOT NULL,
    scheduled_time   TIMESTAMP(6)       NOT NULL,
    created_time     TIMESTAMP(6),
    attempts         NUMBER(10)         DEFAULT 0 NOT NULL,
    max_retries      NUMBER(10)         DEFAULT 3 NOT NULL,
    backoff_kind     VARCHAR2(16),
    backoff_param_us NUMBER(19)         DEFAULT 0 NOT NULL,
    claim_seq        NUMBER(19)         DEFAULT 0 NOT NULL,
    crash_count      NUMBER(10)         DEFAULT 0 NOT NULL,
    owner_node       VARCHAR2(255 CHAR),
    claimed_time     TIMESTAMP(6),
    finished_time    TIMESTAMP(6),
    last_error       CLOB,
    job_result       BLOB,
    result_type      VARCHAR2(255 CHAR),
    idempotency_key  VARCHAR2(255 CHAR),
    params           CLOB,
    CONSTRAINT pk_scheduler_job PRIMARY KEY (job_id)
);

-- The claim takes, for each priority level, the first due PENDING jobs in
-- (scheduled_time, job_id) order: one range scan of this index per level.
-- Oracle has no partial indexes, so status leads the key.
CREATE INDEX IF NOT EXISTS idx_scheduler_job_claim
    ON scheduler_job (status, priority, scheduled_time, job_id);

-- Idempotency keys are unique. Oracle leaves rows whose key columns are
-- all NULL out of a B-tree index, so jobs without a key never clash.
CREATE UNIQUE INDEX IF NOT EXISTS uq_scheduler_job_idempotency_key
    ON scheduler_job (idempotency_key);

-- Orphan recovery reads the RUNNING jobs and their owners.
CREATE INDEX IF NOT EXISTS idx_scheduler_job_owner
    ON scheduler_job (status, owner_node);

-- ListJobs with a status (the dead-letter queue: FAILED) pages by id.
CREATE INDEX IF NOT EXISTS idx_scheduler_job_status
    ON scheduler_job (status, job_id);

-- Tags live in their own table so that tag affinity compiles to
-- EXISTS / NOT EXISTS.
CREATE TABLE IF NOT EXISTS scheduler_job_tag (
    job_id RAW(16)            NOT NULL,
    tag    VARCHAR2(255 CHAR) NOT NULL,
    CONSTRAINT pk_scheduler_job_tag PRIMARY KEY (job_id, tag),
    CONSTRAINT fk_scheduler_job_tag_job FOREIGN KEY (job_id)
        REFERENCES scheduler_job (job_id) ON DELETE CASCADE
);

CREATE INDEX IF NOT EXISTS idx_scheduler_job_tag_tag
    ON scheduler_job_tag (tag, job_id);

-- One row per live worker node; orphan recovery compares heartbeat_ts with
-- now minus the grace period.
CREATE TABLE IF NOT EXISTS scheduler_node (
    node_id      VARCHAR2(255 CHAR) NOT NULL,
    heartbeat_ts TIMESTAMP(6)       NOT NULL,
    CONSTRAINT pk_scheduler_node PRIMARY KEY (node_id)
);

-- The migrations applied to this schema, one row per version. Every
-- migration file records its own version last, so a schema applied by an
-- external tool is recognised by the store.
CREATE TABLE IF NOT EXISTS ratchet_schema_version (
    version    NUMBER(10)   NOT NULL,
    applied_at TIMESTAMP(6) NOT NULL,
    CONSTRAINT pk_ratchet_schema_version PRIMARY KEY (version)
);

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 1, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 1);
