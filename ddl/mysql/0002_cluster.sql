-- Ratchet for Go: MySQL / MariaDB schema, version 2: cluster capabilities.
--
-- Resource permits, named leases, per-job versioned state and per-job
-- write-once properties. Same conventions as 0001_init.sql: plain SQL,
-- unqualified names, VARBINARY for names compared byte for byte.

-- A job naming a resource holds one of its permits exactly while it is
-- RUNNING: no more than resource_limit RUNNING jobs name the same resource.
-- Completion, retry, failure, release and recovery all leave RUNNING, so
-- they release the permit with no bookkeeping of their own. resource_limit
-- is at least 1 when resource_name is set. The claim counts the holders of
-- a resource (its RUNNING jobs) through idx_scheduler_job_resource; MySQL
-- has no partial indexes, so the index holds every job, keyed by resource
-- first (NULL for most jobs). One statement, so that the columns and their
-- index appear together.
ALTER TABLE scheduler_job
    ADD COLUMN resource_name  VARBINARY(255),
    ADD COLUMN resource_limit BIGINT NOT NULL DEFAULT 0,
    ADD KEY idx_scheduler_job_resource (resource_name, status);

-- One row per resource that a claim has admitted jobs of: claims that admit
-- jobs of a resource lock its row (in name order) from the count of its
-- holders to their commit, so that claimers on different connections take
-- turns and never over-admit. Claims create the rows as needed.
CREATE TABLE scheduler_resource (
    resource_name VARBINARY(255) NOT NULL,
    PRIMARY KEY (resource_name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Named, time-limited leases (start-up and cluster-singleton work): a lease
-- is free once expires_at <= now.
CREATE TABLE scheduler_lease (
    name       VARBINARY(255) NOT NULL,
    owner      VARBINARY(255) NOT NULL,
    expires_at DATETIME(6)    NOT NULL,
    PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Per-job, per-namespace mutable JSON state with a version for
-- compare-and-set. The JSON is a LONGBLOB so that it round-trips byte for
-- byte (a JSON column would reformat it).
CREATE TABLE scheduler_job_state (
    job_id     BINARY(16)     NOT NULL,
    namespace  VARBINARY(255) NOT NULL,
    state_json LONGBLOB       NOT NULL,
    version    BIGINT         NOT NULL,
    PRIMARY KEY (job_id, namespace),
    CONSTRAINT fk_scheduler_job_state_job FOREIGN KEY (job_id)
        REFERENCES scheduler_job (job_id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Write-once plaintext properties per job, searchable by (key, value).
CREATE TABLE scheduler_job_property (
    job_id     BINARY(16)      NOT NULL,
    prop_key   VARBINARY(255)  NOT NULL,
    prop_value VARBINARY(1024) NOT NULL,
    PRIMARY KEY (job_id, prop_key),
    KEY idx_scheduler_job_property_value (prop_key, prop_value, job_id),
    CONSTRAINT fk_scheduler_job_property_job FOREIGN KEY (job_id)
        REFERENCES scheduler_job (job_id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (2, UTC_TIMESTAMP(6));
