-- Ratchet for Go: PostgreSQL schema, version 15: the snooze count.
--
-- ratchet:compatible
--
-- snoozes counts the runs of the job that ended in a snooze (a body that
-- returned ratchet.Snooze: the job went back to PENDING without spending
-- an attempt; spi.Job.Snoozes), which the engine bounds per task. A
-- dead-letter retry resets it with the attempts. The archive's copy gets
-- the same column in the same place. Same conventions as 0001_init.sql.

ALTER TABLE scheduler_job ADD COLUMN snoozes integer NOT NULL DEFAULT 0;
ALTER TABLE scheduler_job_archive ADD COLUMN snoozes integer NOT NULL DEFAULT 0;

INSERT INTO ratchet_schema_version (version, applied_at, compatible) VALUES (15, now(), 1);
