-- Ratchet for Go: PostgreSQL schema, version 18: unique and debounced jobs.
--
-- ratchet:compatible
--
-- scheduler_job_unique holds the unique keys of jobs (spi.UniqueStore,
-- ratchet.WithUnique): one row per key, naming the job that holds it.
-- An insert of a unique job makes sure its key's row exists, locks it,
-- reads the holder's status, and either answers the holder (a
-- duplicate) or writes the job and names it here, all in the insert's
-- transaction: two inserts of a key take turns on the row. The foreign
-- key deletes a key with its holder (a delete, a purge, an archive
-- move), and job_id is NULL only inside the transaction that made the
-- row. until_time is the end of a debounce's window
-- (ratchet.WithDebounce), NULL for a plain unique key: the holder holds
-- the key only for jobs created before it. Jobs without a unique or
-- debounce key never touch the table; the index on job_id is what a
-- delete of any job probes for its key.
-- Same conventions as 0001_init.sql.

CREATE TABLE scheduler_job_unique (
    unique_key text NOT NULL,
    job_id     uuid REFERENCES scheduler_job (job_id) ON DELETE CASCADE,
    until_time timestamptz,
    CONSTRAINT pk_scheduler_job_unique PRIMARY KEY (unique_key)
);

CREATE INDEX idx_scheduler_job_unique_job
    ON scheduler_job_unique (job_id);

INSERT INTO ratchet_schema_version (version, applied_at, compatible) VALUES (18, now(), 1);
