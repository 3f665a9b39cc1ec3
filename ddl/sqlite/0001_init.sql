-- Ratchet for Go: SQLite schema, version 1.
--
-- Plain SQL with no templating: apply it with the store (it runs at Open),
-- with the `ratchet migrate` command, or with Flyway / Liquibase.
--
-- Conventions of this dialect:
--   * times are INTEGER unix microseconds, UTC; NULL means "not set";
--   * durations are INTEGER microseconds;
--   * job ids are the 36-character canonical lower-case UUID text, so that
--     the byte order of job_id is the order of the UUIDs (UUIDv7: creation
--     order);
--   * payloads and results are BLOBs (JSON or an encryption envelope).

CREATE TABLE scheduler_job (
    job_id           TEXT    NOT NULL PRIMARY KEY,
    task_name        TEXT    NOT NULL,
    payload          BLOB,
    status           TEXT    NOT NULL,
    priority         INTEGER NOT NULL DEFAULT 2,
    scheduled_time   INTEGER NOT NULL,
    created_time     INTEGER,
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_retries      INTEGER NOT NULL DEFAULT 3,
    backoff_kind     TEXT    NOT NULL DEFAULT 'NONE',
    backoff_param_us INTEGER NOT NULL DEFAULT 0,
    claim_seq        INTEGER NOT NULL DEFAULT 0,
    crash_count      INTEGER NOT NULL DEFAULT 0,
    owner_node       TEXT,
    claimed_time     INTEGER,
    finished_time    INTEGER,
    last_error       TEXT,
    job_result       BLOB,
    result_type      TEXT,
    idempotency_key  TEXT UNIQUE,
    params           TEXT
);

-- The claim takes, for each priority level, the first due PENDING jobs in
-- (scheduled_time, job_id) order: a range scan of this index per level.
-- Orphan recovery scans its RUNNING range.
CREATE INDEX idx_scheduler_job_claim
    ON scheduler_job (status, priority, scheduled_time, job_id);

-- Tags live in their own table so that tag affinity compiles to
-- EXISTS / NOT EXISTS. The rowid keeps the order in which tags were given.
CREATE TABLE scheduler_job_tag (
    job_id TEXT NOT NULL REFERENCES scheduler_job (job_id) ON DELETE CASCADE,
    tag    TEXT NOT NULL,
    PRIMARY KEY (job_id, tag)
);

CREATE INDEX idx_scheduler_job_tag_tag
    ON scheduler_job_tag (tag, job_id);

-- One row per live worker node; orphan recovery compares heartbeat_ts with
-- now minus the grace period.
CREATE TABLE scheduler_node (
    node_id      TEXT    NOT NULL PRIMARY KEY,
    heartbeat_ts INTEGER NOT NULL
);

-- The migrations applied to this database, one row per version. Every
-- migration file records its own version last, so a schema applied by an
-- external tool is recognised by the store.
CREATE TABLE ratchet_schema_version (
    version    INTEGER NOT NULL PRIMARY KEY,
    applied_at INTEGER NOT NULL
);

INSERT INTO ratchet_schema_version (version, applied_at)
VALUES (1, CAST(strftime('%s', 'now') AS INTEGER) * 1000000);
