-- Ratchet for Go: Oracle schema, version 6: the archive of finished jobs.
--
-- The archiver moves terminal jobs older than the retention, with their
-- tags, properties and state, into copies of those tables: the same
-- columns in the same order (a later migration that adds a column to a
-- live table adds it here too), keyed by job, without the live tables'
-- other indexes and constraints: an archived idempotency key no longer
-- deduplicates. Same conventions as 0001_init.sql: idempotent statements.
CREATE TABLE IF NOT EXISTS scheduler_job_archive AS SELECT * FROM scheduler_job WHERE 1 = 0;
CREATE UNIQUE INDEX IF NOT EXISTS pk_scheduler_job_archive ON scheduler_job_archive (job_id);

CREATE TABLE IF NOT EXISTS scheduler_job_archive_tag AS SELECT * FROM scheduler_job_tag WHERE 1 = 0;
CREATE UNIQUE INDEX IF NOT EXISTS pk_scheduler_job_archive_tag ON scheduler_job_archive_tag (job_id, tag);

CREATE TABLE IF NOT EXISTS scheduler_job_archive_property AS SELECT * FROM scheduler_job_property WHERE 1 = 0;
CREATE UNIQUE INDEX IF NOT EXISTS pk_scheduler_job_archive_property ON scheduler_job_archive_property (job_id, prop_key);

CREATE TABLE IF NOT EXISTS scheduler_job_archive_state AS SELECT * FROM scheduler_job_state WHERE 1 = 0;
CREATE UNIQUE INDEX IF NOT EXISTS pk_scheduler_job_archive_state ON scheduler_job_archive_state (job_id, namespace);

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 6, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 6);
