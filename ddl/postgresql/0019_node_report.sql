-- Ratchet for Go: PostgreSQL schema, version 19: the report of each node.
--
-- ratchet:compatible
--
-- A node records, with its heartbeat, a report of itself
-- (spi.NodeReportStore): its SDK version, concurrency, running jobs,
-- start time and circuit breakers, as one JSON document of at most 64 KiB
-- (spi.EncodeNodeReport); NULL for a node that reported nothing (a node
-- of an older version). The dashboard's nodes and breakers pages read it
-- for every live node. A nullable column: older code runs unchanged.
-- Same conventions as 0001_init.sql.
ALTER TABLE scheduler_node ADD COLUMN node_report text;

INSERT INTO ratchet_schema_version (version, applied_at, compatible) VALUES (19, now(), 1);
