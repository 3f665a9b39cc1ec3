-- Ratchet for Go: MySQL / MariaDB schema, version 14: no owner key.
--
-- idx_scheduler_job_owner (status, owner_node) of version 1 is led by
-- status, so every claim and every completion wrote it twice (a
-- delete-marked entry and a new one), and purge removed as many. What it
-- served, orphan recovery's read of the RUNNING jobs and their owners,
-- idx_scheduler_job_status (status, job_id) serves as well: a range of
-- the RUNNING entries, in the job id order the recovery reads them in,
-- each row's owner read from the clustered index. No statement filters
-- on the owner alone. In a burn-down of 50,000 no-op jobs on MariaDB
-- 10.11 the work was 8 % faster without it (median of four alternating
-- pairs, 4 to 9 %), the inserts 4 %. Same conventions as 0001_init.sql.
ALTER TABLE scheduler_job DROP KEY idx_scheduler_job_owner;

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (14, UTC_TIMESTAMP(6));
