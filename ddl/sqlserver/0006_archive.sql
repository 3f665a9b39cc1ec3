-- Ratchet for Go: SQL Server schema, version 6: the archive of finished
-- jobs.
--
-- The archiver moves terminal jobs older than the retention, with their
-- tags, properties and state, into copies of those tables: the same
-- columns in the same order (a later migration that adds a column to a
-- live table adds it here too), keyed by job, without the live tables'
-- other indexes and constraints: an archived idempotency key no longer
-- deduplicates. Same conventions as 0001_init.sql.
SELECT * INTO scheduler_job_archive FROM scheduler_job WHERE 1 = 0;
GO
ALTER TABLE scheduler_job_archive ADD CONSTRAINT pk_scheduler_job_archive PRIMARY KEY (job_id);
GO

SELECT * INTO scheduler_job_archive_tag FROM scheduler_job_tag WHERE 1 = 0;
GO
ALTER TABLE scheduler_job_archive_tag ADD CONSTRAINT pk_scheduler_job_archive_tag PRIMARY KEY (job_id, tag);
GO

SELECT * INTO scheduler_job_archive_property FROM scheduler_job_property WHERE 1 = 0;
GO
ALTER TABLE scheduler_job_archive_property ADD CONSTRAINT pk_scheduler_job_archive_property PRIMARY KEY (job_id, prop_key);
GO

SELECT * INTO scheduler_job_archive_state FROM scheduler_job_state WHERE 1 = 0;
GO
ALTER TABLE scheduler_job_archive_state ADD CONSTRAINT pk_scheduler_job_archive_state PRIMARY KEY (job_id, namespace);
GO

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (6, SYSUTCDATETIME());
