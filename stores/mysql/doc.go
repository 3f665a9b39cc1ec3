// Package mysql is the Ratchet store for MySQL and MariaDB: an [spi.Store]
// on database/sql and go-sql-driver/mysql, for any number of worker nodes
// sharing one database.
//
// It needs MySQL 8.0 or later or MariaDB 10.6 or later (FOR UPDATE SKIP
// LOCKED) with InnoDB, and is tested on MariaDB 10.11.
//
// # Opening
//
// [Open] takes a go-sql-driver DSN (user:pass@tcp(host:3306)/db) or a URL
// (mysql://user:pass@host:3306/db), creates a connection pool that the
// store owns ([Options.MaxConns], 16 by default) and contacts the server
// within a bounded time ([Options.ConnectTimeout], 10 s by default), with
// an error naming the address when it cannot; it refuses servers older than
// the minimum versions. The store sets the session settings it relies on:
// READ COMMITTED isolation (no gap locks, and every statement reads the
// latest committed rows), a strict SQL mode (a value that does not fit
// fails instead of being truncated), UTC, found-rows counts, and
// client-side interpolation of parameters, so that every statement is one
// round trip. Every statement names its tables qualified by the database
// ([Options.Database], else the DSN's), so that several independent Ratchet
// installations can share a server in different databases.
//
// With [Options.ApplyMigrations], opening brings the database to the
// latest version of the versioned SQL files of the ddl module (ddl/mysql),
// creating the database when it is missing; [Migrate] and [MigrateDSN] do
// the same on their own (the `ratchet migrate` command). MySQL commits
// every DDL statement on its own, so a migration cannot be one
// transaction: migrators take a named lock (GET_LOCK) for the database,
// re-read the recorded version and apply the missing files statement by
// statement, each file recording its version last, so that nodes starting
// together apply each migration once. Without ApplyMigrations the store
// only checks the schema and fails with an error wrapping [spi.ErrSchema]
// when the database or its schema is missing, partial (Ratchet tables
// without a recorded version, a recorded version with tables missing, or
// tables of a later version: a migration that failed half-way), older or
// newer than this code. The same files can be applied with Flyway,
// Liquibase or the mysql client instead: they hold plain SQL with
// unqualified names.
//
// # Claim strategy
//
// Effective priority (see [spi.EffectivePriority]) grows with waiting time
// only inside a priority level, so the best N jobs overall are among the
// best N of each of the five levels. ClaimJobs runs one READ COMMITTED
// transaction. Its first statement is a UNION ALL of LIMITed subqueries,
// one per task the claim lists and level, each taking the first N due PENDING jobs in
// (scheduled_time, job_id) order with FOR UPDATE SKIP LOCKED: a range scan
// of the index idx_scheduler_job_claim on (status, task_name, priority,
// scheduled_time, job_id) (MySQL has no partial indexes, so status leads
// the key), in which jobs failing the tag filter and jobs of a full
// resource are passed over. The tag filter is the EXISTS / NOT EXISTS of
// the spec written as correlated counts on the tag table's primary key
// (all tags of All, at least one of Any, none of None): MySQL and MariaDB
// may turn a top-level EXISTS into a semi-join that first collects every
// job carrying the tags, a scan as large as the backlog, while a count is
// evaluated only for the rows that the index scan visits. The at most
// 5·N candidates are merged in Go by effective priority descending, due
// time and id; one UPDATE by primary key moves the best N to RUNNING with
// claim_seq + 1, and one SELECT reads them back with their tags. The cost
// is O(N log backlog) whatever the size of the backlog, aging is exact, and
// concurrent claimers skip each other's rows instead of waiting.
//
// Only jobs of the tasks the claim lists ([spi.ClaimParams].Tasks, the
// tasks the node registered) are read: the claim index is led by the task,
// so each claim reads one range per task and level, and a backlog of a
// task no claimer lists (a node of a mixed fleet that lacks it) costs
// nothing; `ratchet bench --mode mixedfleet` measures it. A claim that
// lists no task first reads the distinct tasks of the pending jobs
// (sqlcore.ClaimTasks, a loose index scan).
//
// Resource permits: when the best candidates name resources, the claim
// locks those resources' rows in scheduler_resource (creating them; in name
// order, so claimers cannot deadlock on them), then counts each resource's
// RUNNING holders in a statement of its own, and admits the candidates in
// claim order while their resource has a free permit, skipping the others.
// The row locks last until the claim commits, and READ COMMITTED lets the
// count see every claim committed before the lock was granted, so claimers
// on different connections and processes take turns per resource and never
// over-admit.
//
// A claimed row that cannot be read back as a job (see [spi.ErrCorruptJob])
// is moved to FAILED, in the same transaction, with the problem as its last
// error instead of being returned, so one bad row cannot block the queue.
//
// Owner writes (CompleteJobs, ReleaseJobs) are one transaction per batch: a
// locking read of the batch's RUNNING jobs by primary key, in id order,
// decides which entries apply (MariaDB has no UPDATE ... RETURNING), then
// one UPDATE ... JOIN of a derived table of the entries' values (UNION ALL
// of one SELECT per entry) writes them all, fenced again by claim_seq and
// status = 'RUNNING'. Inserts are multi-row INSERTs inside one transaction,
// chunked to at most 500 rows and a quarter of the server's
// max_allowed_packet; idempotency keys are looked up with a locking read
// first, and a key committed by another transaction meanwhile (a duplicate
// on the unique index) makes the insert look again.
//
// # Deadlocks and lost connections
//
// Errors 1213 (deadlock), 1205 (lock wait timeout) and a lost connection
// (driver.ErrBadConn, the driver's "invalid connection", EOF or a reset on
// the socket, KILL, server shutdown or "server has gone away") are
// transient: the store rolls the transaction back and runs it again from
// the start, up to 5 attempts with a pause doubling from 10 ms, for claims,
// completions, releases, inserts, recovery and the other writes. A
// transaction that failed before COMMIT was rolled back by the server, so
// running it again loses and duplicates nothing. A connection lost during
// COMMIT leaves the outcome unknown: claims, completions, releases and
// inserts then read their rows back on another connection and report
// success when the commit happened (so jobs claimed by a commit whose
// answer was lost are returned, not stranded), or run again when it did
// not; when even that check fails, the error says that the outcome is
// unknown. Other errors, and errors after the last attempt, are returned
// wrapped with the operation's name ("mysql: claim jobs: ...").
// [Store.InsertJobsTx] runs in the application's transaction and retries
// nothing.
//
// # Capabilities
//
// Besides [spi.Store], a [Store] implements:
//
//   - [spi.TxInserter] for *sql.Tx: InsertJobsTx inserts jobs inside a
//     transaction that the application owns (begun on [Store.DB]), so
//     that they exist only if it commits;
//   - [spi.ClaimChecker], [spi.LeaseStore] (an atomic upsert on
//     scheduler_lease), [spi.JobStateStore] (the job's fence read with a
//     shared lock, then an insert or a version compare-and-set) and
//     [spi.JobPropertyStore] (write-once rows, searchable by key and
//     value through an index).
//   - [spi.NodeTaskStore]: the tasks of each node, recorded with its
//     heartbeat in scheduler_node.task_names (a JSON array), and the
//     pending jobs per task, counted over the claim index.
//
// It does not implement [spi.WakeupListener]: MySQL has no LISTEN/NOTIFY.
// Nodes find new work by polling (with the engine's adaptive delay), and an
// in-process coordinator (the engine's LocalCoordinator) wakes the pollers
// of the process that submitted it at once.
//
// # Representation
//
// Times are DATETIME(6) in UTC (microsecond precision; values are
// truncated, never rounded), returned as UTC [time.Time] values; a zero
// time is stored as NULL (except the scheduled time, which is never NULL).
// DATETIME holds years 1000 to 9999. Durations (the backoff parameter) are
// BIGINT microseconds. Job ids are BINARY(16), the UUID's bytes, so that
// ListJobs pages in the byte order of the UUIDs. Payloads and results are
// LONGBLOB and round-trip byte for byte; nil and empty are kept apart.
// Names that are compared or unique (idempotency keys, tags, node ids,
// resources, lease names and owners, state namespaces, property keys and
// values) are VARBINARY: compared byte for byte, with no case folding and
// no trailing-space padding, whatever the server's collation; most are
// limited to 255 bytes (property values to 1,024), and a longer value fails
// the write. Params are a JSON object in a TEXT column. Tags are rows of
// scheduler_job_tag (duplicates dropped) and come back sorted. Rows with an
// unknown status, an out-of-range priority or params that are not a JSON
// object of strings are reported by GetJob and ListJobs as errors wrapping
// [spi.ErrCorruptJob] that name the job and the problem.
//
// # What is shared
//
// The decisions every SQL store makes the same way come from the stores'
// shared core (stores/internal/sqlcore): the ranking of claim candidates
// with exact aging and their admission against resource permits, the order
// and dedupe of fenced owner writes and the recognition of a completion
// that already applied (a batch sent again after its answer was lost
// counts as applied), the crash-budget decision of orphan recovery
// (spi.CrashOutcome, which the MongoDB and memory stores apply too), the
// tasks a claim reads, the node records of spi.NodeTaskStore, the
// validation of a job row, the spi.JobStateStore write methods, the reading
// of job pages and properties, and the retry loop of transactions. This
// package supplies what is particular to its database: the SQL text and
// placeholders, the type codecs, the classification of errors and the lock
// primitive. Moving the statements themselves behind one dialect interface
// is the part of the store-layer work still open.
package mysql
