-- Ratchet for Go: Oracle schema, version 13: the archive's purge,
-- and migrations marked compatible.
--
-- ratchet:compatible
--
-- The archive's purge (spi.JobArchiver.PurgeArchivedJobs) deletes the
-- archived jobs finished before a cutoff, oldest first:
-- idx_scheduler_job_archive_finished serves its read.
--
-- ratchet_schema_version.compatible is 1 for a migration that code of an
-- older version runs against unchanged: expand-only (it adds tables,
-- columns that are nullable or have a default, and indexes; it drops,
-- renames and retypes nothing that older code reads or writes). Such a
-- file has a line holding only "-- ratchet:compatible" and records its
-- version with compatible = 1. Code at version N keeps working on a
-- database at a later version when every version after N is marked so;
-- otherwise it refuses to open, naming both versions. This migration is
-- itself compatible; the versions before it have no mark, so code older
-- than it refuses any later version. Same conventions as 0001_init.sql: idempotent statements.

BEGIN
    EXECUTE IMMEDIATE 'ALTER TABLE ratchet_schema_version ADD (compatible NUMBER(1) DEFAULT 0 NOT NULL)';
EXCEPTION
    WHEN OTHERS THEN
        IF SQLCODE != -1430 THEN
            RAISE;
        END IF;
END;
/

CREATE INDEX IF NOT EXISTS idx_scheduler_job_archive_finished ON scheduler_job_archive (finished_time, job_id);

INSERT INTO ratchet_schema_version (version, applied_at, compatible)
    SELECT 13, SYS_EXTRACT_UTC(SYSTIMESTAMP), 1 FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 13);
