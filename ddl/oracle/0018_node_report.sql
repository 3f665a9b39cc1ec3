-- Ratchet for Go: Oracle schema, version 18: the report of each node.
--
-- ratchet:compatible
--
-- A node records, with its heartbeat, a report of itself
-- (spi.NodeReportStore): its SDK version, concurrency, running jobs,
-- start time and circuit breakers, as one JSON document of at most 64 KiB
-- (spi.EncodeNodeReport); NULL for a node that reported nothing (a node
-- of an older version). The dashboard's nodes and breakers pages read it
-- for every live node. A nullable column: older code runs unchanged.
-- Same conventions as 0001_init.sql: the block adds the column unless it
-- exists (ORA-01430).
BEGIN
    EXECUTE IMMEDIATE 'ALTER TABLE scheduler_node ADD (node_report CLOB)';
EXCEPTION
    WHEN OTHERS THEN
        IF SQLCODE != -1430 THEN
            RAISE;
        END IF;
END;
/

INSERT INTO ratchet_schema_version (version, applied_at, compatible)
    SELECT 18, SYS_EXTRACT_UTC(SYSTIMESTAMP), 1 FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version WHERE version = 18);
