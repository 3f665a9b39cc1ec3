-- Ratchet for Go: SQLite schema, version 20: the history of the job counts.
--
-- ratchet:compatible
--
-- scheduler_stats_sample is the history of the job counts
-- (spi.StatsSampleStore): the number of live jobs of each status, one
-- sample per minute, kept for 24 hours (spi.StatsSampleRetention), so
-- that the dashboard's charts outlive the process that draws them.
-- sample_minute is the sample's minute as Unix seconds (UTC, a whole
-- minute; a number, the same in every dialect, not a time column);
-- counts is the JSON object of status to count (spi.EncodeStatsCounts,
-- zero counts left out). Every process that samples records into the
-- same minutes: the first sample of a minute is kept (an insert that
-- does nothing when the minute's row exists) and each record then
-- deletes the rows older than the retention; both, and the reads from a
-- minute on in order, are ranges of the primary key. A new table: older
-- code runs unchanged.
-- Same conventions as 0001_init.sql.

CREATE TABLE scheduler_stats_sample (
    sample_minute INTEGER NOT NULL PRIMARY KEY,
    counts        TEXT    NOT NULL
);

INSERT INTO ratchet_schema_version (version, applied_at, compatible)
VALUES (20, CAST(strftime('%s', 'now') AS INTEGER) * 1000000, 1);
