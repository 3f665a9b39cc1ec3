-- Ratchet for Go: SQLite schema, version 2: cluster capabilities.
--
-- Resource permits, named leases, per-job versioned state and per-job
-- write-once properties. Same conventions as 0001_init.sql (times are
-- INTEGER unix microseconds, job ids the canonical UUID text).

-- A job naming a resource holds one of its permits exactly while it is
-- RUNNING: no more than resource_limit RUNNING jobs name the same resource.
-- Completion, retry, failure, release and recovery all leave RUNNING, so
-- they release the permit with no bookkeeping of their own. resource_limit
-- is at least 1 when resource_name is set.
ALTER TABLE scheduler_job ADD COLUMN resource_name TEXT;
ALTER TABLE scheduler_job ADD COLUMN resource_limit INTEGER NOT NULL DEFAULT 0;

-- The claim counts the holders of a resource: the RUNNING jobs naming it.
-- Only RUNNING rows that name a resource are in this index, so it stays as
-- small as the set of running permit holders.
CREATE INDEX idx_scheduler_job_resource
    ON scheduler_job (resource_name)
    WHERE status = 'RUNNING' AND resource_name IS NOT NULL;

-- Named, time-limited leases (start-up and cluster-singleton work): a lease
-- is free once expires_at <= now.
CREATE TABLE scheduler_lease (
    name       TEXT    NOT NULL PRIMARY KEY,
    owner      TEXT    NOT NULL,
    expires_at INTEGER NOT NULL
);

-- Per-job, per-namespace mutable JSON state with a version for
-- compare-and-set. The JSON is a BLOB so that it round-trips byte for byte.
CREATE TABLE scheduler_job_state (
    job_id     TEXT    NOT NULL REFERENCES scheduler_job (job_id) ON DELETE CASCADE,
    namespace  TEXT    NOT NULL,
    state_json BLOB    NOT NULL,
    version    INTEGER NOT NULL,
    PRIMARY KEY (job_id, namespace)
);

-- Write-once plaintext properties per job, searchable by (key, value).
CREATE TABLE scheduler_job_property (
    job_id     TEXT NOT NULL REFERENCES scheduler_job (job_id) ON DELETE CASCADE,
    prop_key   TEXT NOT NULL,
    prop_value TEXT NOT NULL,
    PRIMARY KEY (job_id, prop_key)
);

CREATE INDEX idx_scheduler_job_property_value
    ON scheduler_job_property (prop_key, prop_value, job_id);

INSERT INTO ratchet_schema_version (version, applied_at)
VALUES (2, CAST(strftime('%s', 'now') AS INTEGER) * 1000000);
