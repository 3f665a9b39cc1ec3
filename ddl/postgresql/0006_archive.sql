-- Ratchet for Go: PostgreSQL schema, version 6: the archive of finished jobs.
--
-- The archiver moves terminal jobs older than the retention, with their
-- tags, properties and state, into copies of those tables: the same
-- columns in the same order (a later migration that adds a column to a
-- live table adds it here too), keyed by job, without the live tables'
-- other indexes and constraints. An archived idempotency key no longer
-- deduplicates: the unique index is the live table's only. Same
-- conventions as 0001_init.sql.
CREATE TABLE scheduler_job_archive (LIKE scheduler_job INCLUDING DEFAULTS);
ALTER TABLE scheduler_job_archive ADD PRIMARY KEY (job_id);

CREATE TABLE scheduler_job_archive_tag (LIKE scheduler_job_tag);
ALTER TABLE scheduler_job_archive_tag ADD PRIMARY KEY (job_id, tag);

CREATE TABLE scheduler_job_archive_property (LIKE scheduler_job_property);
ALTER TABLE scheduler_job_archive_property ADD PRIMARY KEY (job_id, prop_key);

CREATE TABLE scheduler_job_archive_state (LIKE scheduler_job_state);
ALTER TABLE scheduler_job_archive_state ADD PRIMARY KEY (job_id, namespace);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (6, now());
