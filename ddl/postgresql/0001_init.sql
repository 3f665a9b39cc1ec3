-- Ratchet for Go: PostgreSQL schema, version 1 (PostgreSQL 14 or later).
--
-- Plain SQL with no templating and no schema-qualified names: apply it with
-- the store (Options.ApplyMigrations), with the `ratchet migrate` command, or
-- with Flyway / Liquibase. The tables are created in the first schema of the
-- search_path; the store's migrator sets search_path to the configured
-- schema before it runs this file.
--
-- Conventions of this dialect:
--   * times are timestamptz (microsecond precision, UTC); NULL means "not
--     set";
--   * durations are bigint microseconds;
--   * job ids are uuid, whose order is the byte order of the UUIDs (UUIDv7:
--     creation order);
--   * payloads and results are bytea, so they round-trip byte for byte (JSON
--     or an encryption envelope; jsonb would reformat them);
--   * params are a JSON object of strings in a text column.

CREATE TABLE scheduler_job (
    job_id           uuid        NOT NULL PRIMARY KEY,
    task_name        text        NOT NULL,
    payload          bytea,
    status           text        NOT NULL,
    priority         integer     NOT NULL DEFAULT 2,
    scheduled_time   timestamptz NOT NULL,
    created_time     timestamptz,
    attempts         integer     NOT NULL DEFAULT 0,
    max_retries      integer     NOT NULL DEFAULT 3,
    backoff_kind     text        NOT NULL DEFAULT 'NONE',
    backoff_param_us bigint      NOT NULL DEFAULT 0,
    claim_seq        bigint      NOT NULL DEFAULT 0,
    crash_count      integer     NOT NULL DEFAULT 0,
    owner_node       text,
    claimed_time     timestamptz,
    finished_time    timestamptz,
    last_error       text,
    job_result       bytea,
    result_type      text,
    idempotency_key  text,
    params           text
);

-- The claim takes, for each priority level, the first due PENDING jobs in
-- (scheduled_time, job_id) order: one range scan of this partial index per
-- level. Only PENDING rows are in it, so it stays as small as the backlog.
CREATE INDEX idx_scheduler_job_claim
    ON scheduler_job (priority, scheduled_time, job_id)
    WHERE status = 'PENDING';

-- Idempotency keys are unique. Most jobs have none, so the index holds only
-- the jobs that do.
CREATE UNIQUE INDEX uq_scheduler_job_idempotency_key
    ON scheduler_job (idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- Orphan recovery reads the RUNNING jobs and their owners.
CREATE INDEX idx_scheduler_job_owner
    ON scheduler_job (owner_node)
    WHERE status = 'RUNNING';

-- The dead-letter queue, listed by id (ListJobs with status FAILED). Only
-- FAILED rows are in it.
CREATE INDEX idx_scheduler_job_failed
    ON scheduler_job (job_id)
    WHERE status = 'FAILED';

-- Tags live in their own table so that tag affinity compiles to
-- EXISTS / NOT EXISTS.
CREATE TABLE scheduler_job_tag (
    job_id uuid NOT NULL REFERENCES scheduler_job (job_id) ON DELETE CASCADE,
    tag    text NOT NULL,
    PRIMARY KEY (job_id, tag)
);

CREATE INDEX idx_scheduler_job_tag_tag
    ON scheduler_job_tag (tag, job_id);

-- One row per live worker node; orphan recovery compares heartbeat_ts with
-- now minus the grace period.
CREATE TABLE scheduler_node (
    node_id      text        NOT NULL PRIMARY KEY,
    heartbeat_ts timestamptz NOT NULL
);

-- The migrations applied to this schema, one row per version. Every
-- migration file records its own version last, so a schema applied by an
-- external tool is recognised by the store.
CREATE TABLE ratchet_schema_version (
    version    integer     NOT NULL PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (1, now());
