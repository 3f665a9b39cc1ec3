-- Ratchet for Go: MySQL / MariaDB schema, version 20: admission control (unique and debounced jobs, rate limits).
--
-- ratchet:compatible
--
-- scheduler_job_unique holds the unique keys of jobs (spi.UniqueStore,
-- ratchet.WithUnique): one row per key, naming the job that holds it.
-- An insert of a unique job makes sure its key's row exists, locks it,
-- reads the holder's status, and either answers the holder (a
-- duplicate) or writes the job and names it here, all in the insert's
-- transaction: two inserts of a key take turns on the row. The foreign
-- key deletes a key with its holder (a delete, a purge, an archive
-- move), and job_id is NULL only inside the transaction that made the
-- row. until_time is the end of a debounce's window
-- (ratchet.WithDebounce), NULL for a plain unique key: the holder holds
-- the key only for jobs created before it. Jobs without a unique or
-- debounce key never touch the table; the index on job_id is what a
-- delete of any job probes for its key.
-- scheduler_rate_start is the log of the starts of each rate limit
-- (ratchet.WithRateLimit, spi.RateLimitStore): per rate resource (the
-- job's resource_name, which names the key and the period), one row per
-- claim that started its jobs, with the database's time and how many. A
-- claim of such jobs holds the resource's lock (as for a permit), reads
-- the database's time, deletes the rows that left the period, sums the
-- others, admits jobs while the sum is below the limit, and adds its row:
-- never more starts than the limit in any window of the period, whoever
-- claims. Jobs without a rate limit never touch it.
-- Same conventions as 0001_init.sql.

CREATE TABLE scheduler_job_unique (
    unique_key VARBINARY(255) NOT NULL,
    job_id     BINARY(16)     NULL,
    until_time DATETIME(6)    NULL,
    PRIMARY KEY (unique_key),
    KEY idx_scheduler_job_unique_job (job_id),
    CONSTRAINT fk_scheduler_job_unique_job FOREIGN KEY (job_id)
        REFERENCES scheduler_job (job_id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE scheduler_rate_start (
    resource_name VARBINARY(255) NOT NULL,
    started_time  DATETIME(6)    NOT NULL,
    starts        INT            NOT NULL,
    PRIMARY KEY (resource_name, started_time)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT INTO ratchet_schema_version (version, applied_at, compatible) VALUES (20, UTC_TIMESTAMP(6), 1);
