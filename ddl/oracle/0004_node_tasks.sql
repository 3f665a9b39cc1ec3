-- Ratchet for Go: Oracle schema, version 4: the tasks of each node.
--
-- A node records, with its heartbeat, the tasks it runs (a JSON array of
-- names, sorted; NULL for a node that recorded none), so that a client can
-- list the pending jobs that no live node runs. Same conventions as
-- 0001_init.sql: the block adds the column unless it exists (ORA-01430).
BEGIN
    EXECUTE IMMEDIATE 'ALTER TABLE scheduler_node ADD (task_names CLOB)';
EXCEPTION
    WHEN OTHERS THEN
        IF SQLCODE != -1430 THEN
            RAISE;
        END IF;
END;
/

INSERT INTO ratchet_schema_version (version, applied_at)
    SELECT 4, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 4);
