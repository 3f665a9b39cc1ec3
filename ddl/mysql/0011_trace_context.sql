-- Ratchet for Go: MySQL / MariaDB schema, version 11: the trace context.
--
-- trace_context is the trace context of the job's submitter (spi.Job.
-- TraceContext): opaque bytes a tracing middleware writes at submit and
-- reads back when the job runs, at most 512 of them; NULL for none. It
-- has a column of its own, not a param, so that a traced job pays for
-- its 25 bytes only, not for a JSON object. The archive's copy gets the
-- same column in the same place. Same conventions as 0001_init.sql.
ALTER TABLE scheduler_job ADD COLUMN trace_context VARBINARY(512);
ALTER TABLE scheduler_job_archive ADD COLUMN trace_context VARBINARY(512);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (11, UTC_TIMESTAMP(6));
