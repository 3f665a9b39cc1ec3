-- Ratchet for Go: Oracle schema, version 14: the snooze count.
--
-- ratchet:compatible
--
-- snoozes counts the runs of the job that ended in a snooze (a body that
-- returned ratchet.Snooze: the job went back to PENDING without spending
-- an attempt; spi.Job.Snoozes), which the engine bounds per task. A
-- dead-letter retry resets it with the attempts. The archive's copy gets
-- the same column in the same place. Same conventions as 0001_init.sql: idempotent statements.
BEGIN
    EXECUTE IMMEDIATE 'ALTER TABLE scheduler_job ADD (snoozes NUMBER(10) DEFAULT 0 NOT NULL)';
EXCEPTION
    WHEN OTHERS THEN
        IF SQLCODE != -1430 THEN
            RAISE;
        END IF;
END;
/

BEGIN
    EXECUTE IMMEDIATE 'ALTER TABLE scheduler_job_archive ADD (snoozes NUMBER(10) DEFAULT 0 NOT NULL)';
EXCEPTION
    WHEN OTHERS THEN
        IF SQLCODE != -1430 THEN
            RAISE;
        END IF;
END;
/

INSERT INTO ratchet_schema_version (version, applied_at, compatible)
    SELECT 14, SYS_EXTRACT_UTC(SYSTIMESTAMP), 1 FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 14);
