-- Ratchet for Go: PostgreSQL schema, version 2: cluster capabilities.
--
-- Resource permits, named leases, per-job versioned state and per-job
-- write-once properties. Same conventions as 0001_init.sql: plain SQL,
-- unqualified names (created in the first schema of the search_path).

-- A job naming a resource holds one of its permits exactly while it is
-- RUNNING: no more than resource_limit RUNNING jobs name the same resource.
-- Completion, retry, failure, release and recovery all leave RUNNING, so
-- they release the permit with no bookkeeping of their own. resource_limit
-- is at least 1 when resource_name is set. Adding a nullable column and a
-- column with a constant default rewrites no rows.
ALTER TABLE scheduler_job ADD COLUMN resource_name text;
ALTER TABLE scheduler_job ADD COLUMN resource_limit bigint NOT NULL DEFAULT 0;

-- The claim counts the holders of a resource: the RUNNING jobs naming it.
-- Only RUNNING rows that name a resource are in this index, so it stays as
-- small as the set of running permit holders.
CREATE INDEX idx_scheduler_job_resource
    ON scheduler_job (resource_name)
    WHERE status = 'RUNNING' AND resource_name IS NOT NULL;

-- Named, time-limited leases (start-up and cluster-singleton work): a lease
-- is free once expires_at <= now.
CREATE TABLE scheduler_lease (
    name       text        NOT NULL PRIMARY KEY,
    owner      text        NOT NULL,
    expires_at timestamptz NOT NULL
);

-- Per-job, per-namespace mutable JSON state with a version for
-- compare-and-set. The JSON is bytea so that it round-trips byte for byte
-- (jsonb would reformat it).
CREATE TABLE scheduler_job_state (
    job_id     uuid   NOT NULL REFERENCES scheduler_job (job_id) ON DELETE CASCADE,
    namespace  text   NOT NULL,
    state_json bytea  NOT NULL,
    version    bigint NOT NULL,
    PRIMARY KEY (job_id, namespace)
);

-- Write-once plaintext properties per job, searchable by (key, value).
CREATE TABLE scheduler_job_property (
    job_id     uuid NOT NULL REFERENCES scheduler_job (job_id) ON DELETE CASCADE,
    prop_key   text NOT NULL,
    prop_value text NOT NULL,
    PRIMARY KEY (job_id, prop_key)
);

CREATE INDEX idx_scheduler_job_property_value
    ON scheduler_job_property (prop_key, prop_value, job_id);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (2, now());
