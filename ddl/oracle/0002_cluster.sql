-- Ratchet for Go: Oracle schema, version 2: cluster capabilities.
--
-- Resource permits, named leases, per-job versioned state and per-job
-- write-once properties. Same conventions as 0001_init.sql: plain SQL,
-- unqualified names, idempotent statements.

-- A job naming a resource holds one of its permits exactly while it is
-- RUNNING: no more than resource_limit RUNNING jobs name the same resource.
-- Completion, retry, failure, release and recovery all leave RUNNING, so
-- they release the permit with no bookkeeping of their own. resource_limit
-- is at least 1 when resource_name is set. The block adds the columns
-- unless they exist (ORA-01430).
BEGIN
    EXECUTE IMMEDIATE 'ALTER TABLE scheduler_job ADD (resource_name VARCHAR2(255 CHAR), resource_limit NUMBER(19) DEFAULT 0 NOT NULL)';
EXCEPTION
    WHEN OTHERS THEN
        IF SQLCODE != -1430 THEN
            RAISE;
        END IF;
END;
/

-- The claim counts the holders of a resource (its RUNNING jobs) through
-- idx_scheduler_job_resource. Oracle has no partial indexes, so the index
-- is keyed by resource first (NULL for most jobs), then status.
CREATE INDEX IF NOT EXISTS idx_scheduler_job_resource
    ON scheduler_job (resource_name, status);

-- One row per resource that a claim has admitted jobs of: claims that admit
-- jobs of a resource lock its row (SELECT ... FOR UPDATE, in name order)
-- from the count of its holders to their commit, so that claimers on
-- different sessions take turns and never over-admit. Claims create the
-- rows as needed.
CREATE TABLE IF NOT EXISTS scheduler_resource (
    resource_name VARCHAR2(255 CHAR) NOT NULL,
    CONSTRAINT pk_scheduler_resource PRIMARY KEY (resource_name)
);

-- Named, time-limited leases (start-up and cluster-singleton work): a lease
-- is free once expires_at <= now.
CREATE TABLE IF NOT EXISTS scheduler_lease (
    name       VARCHAR2(255 CHAR) NOT NULL,
    owner      VARCHAR2(255 CHAR) NOT NULL,
    expires_at TIMESTAMP(6)       NOT NULL,
    CONSTRAINT pk_scheduler_lease PRIMARY KEY (name)
);

-- Per-job, per-namespace mutable JSON state with a version for
-- compare-and-set. The JSON is a BLOB so that it round-trips byte for
-- byte; NULL stands for an empty state.
CREATE TABLE IF NOT EXISTS scheduler_job_state (
    job_id     RAW(16)            NOT NULL,
    namespace  VARCHAR2(255 CHAR) NOT NULL,
    state_json BLOB,
    version    NUMBER(19)         NOT NULL,
    CONSTRAINT pk_scheduler_job_state PRIMARY KEY (job_id, namespace),
    CONSTRAINT fk_scheduler_job_state_job FOREIGN KEY (job_id)
        REFERENCES scheduler_job (job_id) ON DELETE CASCADE
);

-- Write-once plaintext properties per job, searchable by (key, value). An
-- empty value is stored as NULL (Oracle's empty string).
CREATE TABLE IF NOT EXISTS scheduler_job_property (
    job_id     RAW(16)             NOT NULL,
    prop_key   VARCHAR2(255 CHAR)  NOT NULL,
    prop_value VARCHAR2(1000 CHAR),
    CONSTRAINT pk_scheduler_job_property PRIMARY KEY (job_id, prop_key),
    CONSTRAINT fk_scheduler_job_property_job FOREIGN KEY (job_id)
        REFERENCES scheduler_job (job_id) ON DELETE CASCADE
);

CREATE INDEX IF NOT EXISTS idx_scheduler_job_property_value
    ON scheduler_job_property (prop_key, prop_value, job_id);

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 2, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 2);
