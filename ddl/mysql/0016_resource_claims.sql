-- Ratchet for Go: MySQL / MariaDB schema, version 16: a counter that each
-- claim of a permit writes.
--
-- ratchet:compatible
--
-- A claim that admits jobs needing a permit locks the resource's row and
-- counts its holders. The lock used to be a write that changed nothing
-- (ON DUPLICATE KEY UPDATE resource_name = resource_name): InnoDB locks the
-- row, but no row event is logged, and on a Galera cluster, where row
-- locks are local to a node, two claims through two nodes then both
-- commit and a resource can hold more than its permits. The claim now
-- increments claims, a real write that Galera certifies: the second of two
-- such claims fails at commit (1213) and runs again. Same conventions as
-- 0001_init.sql.

ALTER TABLE scheduler_resource ADD COLUMN claims BIGINT NOT NULL DEFAULT 0;

INSERT INTO ratchet_schema_version (version, applied_at, compatible) VALUES (16, UTC_TIMESTAMP(6), 1);
