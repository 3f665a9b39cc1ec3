-- Ratchet for Go: MySQL / MariaDB schema, version 6: the archive of
-- finished jobs.
--
-- The archiver moves terminal jobs older than the retention, with their
-- tags, properties and state, into copies of those tables: the same
-- columns in the same order (a later migration that adds a column to a
-- live table adds it here too), keyed by job, without the live tables'
-- other indexes (a copy by LIKE would keep the unique index of the
-- idempotency keys: an archived key no longer deduplicates). Same
-- conventions as 0001_init.sql.
CREATE TABLE scheduler_job_archive ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
    AS SELECT * FROM scheduler_job WHERE 1 = 0;
ALTER TABLE scheduler_job_archive ADD PRIMARY KEY (job_id);

CREATE TABLE scheduler_job_archive_tag ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
    AS SELECT * FROM scheduler_job_tag WHERE 1 = 0;
ALTER TABLE scheduler_job_archive_tag ADD PRIMARY KEY (job_id, tag);

CREATE TABLE scheduler_job_archive_property ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
    AS SELECT * FROM scheduler_job_property WHERE 1 = 0;
ALTER TABLE scheduler_job_archive_property ADD PRIMARY KEY (job_id, prop_key);

CREATE TABLE scheduler_job_archive_state ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
    AS SELECT * FROM scheduler_job_state WHERE 1 = 0;
ALTER TABLE scheduler_job_archive_state ADD PRIMARY KEY (job_id, namespace);

INSERT INTO ratchet_schema_version (version, applied_at) VALUES (6, UTC_TIMESTAMP(6));
