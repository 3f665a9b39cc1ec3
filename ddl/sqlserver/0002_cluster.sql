-- Ratchet for Go: SQL Server schema, version 2: cluster capabilities.
--
-- Resource permits, named leases, per-job versioned state and per-job
-- write-once properties. Same conventions as 0001_init.sql: plain T-SQL,
-- unqualified names, VARBINARY for names compared byte for byte, batches
-- separated by GO.

-- A job naming a resource holds one of its permits exactly while it is
-- RUNNING: no more than resource_limit RUNNING jobs name the same resource.
-- Completion, retry, failure, release and recovery all leave RUNNING, so
-- they release the permit with no bookkeeping of their own. resource_limit
-- is at least 1 when resource_name is set. Claimers of one resource take
-- turns through sp_getapplock (transaction-owned), so no table is needed.
ALTER TABLE scheduler_job ADD
    resource_name  VARBINARY(255) NULL,
    resource_limit BIGINT         NOT NULL CONSTRAINT df_scheduler_job_resource_limit DEFAULT 0;
GO

-- The claim index carries the resource columns, so that the per-level scans
-- of the claim read no base rows.
CREATE INDEX idx_scheduler_job_claim
    ON scheduler_job (priority, scheduled_time, job_id)
    INCLUDE (resource_name, resource_limit)
    WHERE status = 'PENDING'
    WITH (DROP_EXISTING = ON);

-- The claim counts the holders of a resource: the RUNNING jobs naming it.
-- Only RUNNING rows that name a resource are in this index, so it stays as
-- small as the set of running permit holders.
CREATE INDEX idx_scheduler_job_resource
    ON scheduler_job (resource_name)
    WHERE status = 'RUNNING' AND resource_name IS NOT NULL;

-- Named, time-limited leases (start-up and cluster-singleton work): a lease
-- is free once expires_at <= now.
CREATE TABLE scheduler_lease (
    name       VARBINARY(255) NOT NULL,
    owner      VARBINARY(255) NOT NULL,
    expires_at DATETIME2(6)   NOT NULL,
    CONSTRAINT pk_scheduler_lease PRIMARY KEY (name)
);

-- Per-job, per-namespace mutable JSON state with a version for
-- compare-and-set. The JSON is VARBINARY(MAX) so that it round-trips byte
-- for byte.
CREATE TABLE scheduler_job_state (
    job_id     BINARY(16)     NOT NULL,
    namespace  VARBINARY(255) NOT NULL,
    state_json VARBINARY(MAX) NOT NULL,
    version    BIGINT         NOT NULL,
    CONSTRAINT pk_scheduler_job_state PRIMARY KEY (job_id, namespace),
    CONSTRAINT fk_scheduler_job_state_job FOREIGN KEY (job_id)
        REFERENCES scheduler_job (job_id) ON DELETE CASCADE
);

-- Write-once plaintext properties per job, searchable by (key, value).
-- A key and its value are at most 255 and 1024 bytes (UTF-8).
CREATE TABLE scheduler_job_property (
    job_id     BINARY(16)      NOT NULL,
    prop_key   VARBINARY(255)  NOT NULL,
    prop_value VARBINARY(1024) NOT NULL,
    CONSTRAINT pk_scheduler_job_property PRIMARY KEY (job_id, prop_key),
    CONSTRAINT fk_scheduler_job_property_job FOREIGN KEY (job_id)
        REFERENCES scheduler_job (job_id) ON DELETE CASCADE
);

CREATE INDEX idx_scheduler_job_property_value
    ON scheduler_job_property (prop_key, prop_value, job_id);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (2, SYSUTCDATETIME());
