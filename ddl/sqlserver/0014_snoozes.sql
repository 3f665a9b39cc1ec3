-- Ratchet for Go: SQL Server schema, version 14: the snooze count.
--
-- ratchet:compatible
--
-- snoozes counts the runs of the job that ended in a snooze (a body that
-- returned ratchet.Snooze: the job went back to PENDING without spending
-- an attempt; spi.Job.Snoozes), which the engine bounds per task. A
-- dead-letter retry resets it with the attempts. The archive's copy gets
-- the same column in the same place. Same conventions as 0001_init.sql; batches separated by GO.
ALTER TABLE scheduler_job ADD snoozes INT NOT NULL CONSTRAINT df_scheduler_job_snoozes DEFAULT 0;
GO
ALTER TABLE scheduler_job_archive ADD snoozes INT NOT NULL CONSTRAINT df_scheduler_job_archive_snoozes DEFAULT 0;
GO

INSERT INTO ratchet_schema_version (version, applied_at, compatible) VALUES (14, SYSUTCDATETIME(), 1);
