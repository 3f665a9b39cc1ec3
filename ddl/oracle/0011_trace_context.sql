-- Ratchet for Go: Oracle schema, version 11: the trace context.
--
-- trace_context is the trace context of the job's submitter (spi.Job.
-- TraceContext): opaque bytes a tracing middleware writes at submit and
-- reads back when the job runs, at most 512 of them; NULL for none. It
-- has a column of its own, not a param, so that a traced job pays for
-- its 25 bytes only, not for a JSON object. The archive's copy gets the
-- same column in the same place. Same conventions as 0001_init.sql: idempotent statements.
BEGIN
    EXECUTE IMMEDIATE 'ALTER TABLE scheduler_job ADD (trace_context RAW(512))';
EXCEPTION
    WHEN OTHERS THEN
        IF SQLCODE != -1430 THEN
            RAISE;
        END IF;
END;
/

BEGIN
    EXECUTE IMMEDIATE 'ALTER TABLE scheduler_job_archive ADD (trace_context RAW(512))';
EXCEPTION
    WHEN OTHERS THEN
        IF SQLCODE != -1430 THEN
            RAISE;
        END IF;
END;
/

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 11, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 11);
