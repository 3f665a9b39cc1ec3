// Package sqlserver is the Ratchet store for Microsoft SQL Server: an
// [spi.Store] on database/sql and go-mssqldb, for any number of worker
// nodes sharing one database.
//
// It needs SQL Server 2022 or later (or Azure SQL Database; it relies on
// filtered indexes, THROW, FOR JSON and DROP_EXISTING, all older than
// that, but it is written for and meant to be tested on 2022).
//
// Verification: no SQL Server can run on this project's machines, so CI
// verifies this package only through unit tests that need no server (the
// text of every statement, type and time mapping, error classification,
// DSN validation, and the claim and completion paths against a fake
// database/sql driver, retries included). The store conformance kit
// (tck.Run) runs against a real server only where one is given in
// RATCHET_TEST_SQLSERVER_DSN or a Docker engine can start
// mcr.microsoft.com/mssql/server:2022 (internal/dbtest); elsewhere that
// test skips, saying why.
//
// # Opening
//
// [Open] parses and checks a DSN ([ParseDSN]), creates a connection pool
// that the store owns and connects within a bounded time
// ([Options.ConnectTimeout], 10 s by default), with an error naming the
// server when it cannot. [New] uses a *sql.DB the application already has.
// The store works in the connection's database and default schema (dbo for
// a sysadmin login): give each installation its own database.
//
// With [Options.ApplyMigrations], opening brings the database to the latest
// version of the versioned SQL files of the ddl module (ddl/sqlserver);
// [Migrate] does the same on its own. Each migration runs, batch by batch
// (the files separate batches with GO lines), in one transaction that holds
// an application lock and records its version in ratchet_schema_version,
// so nodes starting together apply each migration once. Without
// ApplyMigrations the store only checks the schema and fails with an error
// wrapping [spi.ErrSchema] when it is missing, partial, older or newer than
// this code. The same files can be applied with sqlcmd, Flyway or
// Liquibase instead.
//
// # Claim strategy
//
// Effective priority (see [spi.EffectivePriority]) grows with waiting time
// only inside a priority level, so the best N jobs overall are among the
// best N of each of the five levels. ClaimJobs is one transaction: a
// UNION ALL of five TOP (N) subqueries, each CROSS APPLYed to the tasks the
// claim lists (a JSON array read by OPENJSON), each a range scan of the
// filtered index idx_scheduler_job_claim on (task_name, priority,
// scheduled_time, job_id) WHERE status = 'PENDING' read WITH (UPDLOCK, READPAST, ROWLOCK) — SQL Server's
// SKIP LOCKED: rows other claimers hold are passed over, and the rows read
// stay update-locked until the commit — returns at most 5·N candidates;
// they are merged in Go in exact aging order (spi.EffectivePriority, then
// scheduled time, then id), and one UPDATE ... OUTPUT moves the best N to
// RUNNING by primary key, the same batch reading them back with their
// tags. The cost is O(N log backlog) whatever the size of the backlog.
//
// Only jobs of the tasks the claim lists ([spi.ClaimParams].Tasks, the
// tasks the node registered) are read: the claim index is led by the task,
// so each claim reads one range per task and level, and a backlog of a
// task no claimer lists (a node of a mixed fleet that lacks it) costs
// nothing; `ratchet bench --mode mixedfleet` measures it. A claim that
// lists no task first reads the distinct tasks of the pending jobs
// (sqlcore.ClaimTasks); SQL Server has no loose index scan, so that read
// scans the pending entries of the claim index.
//
// A node's tag affinity ([spi.ClaimParams].Tags) is part of those range
// scans: All compiles to a COUNT of the job's matching tags, Any to EXISTS
// and None to NOT EXISTS, each a seek of the tag table's primary key with
// the tags as parameters. Jobs the node may not run are passed over inside
// the scan and never block those behind them.
//
// A job naming a resource holds a permit exactly while it is RUNNING, so
// completion, retry, failure, release and recovery give it back with no
// bookkeeping. The scans pass over jobs whose resource is full (as many
// RUNNING holders, counted through the filtered index
// idx_scheduler_job_resource, as the job's limit). When candidates name
// resources, the claim takes a transaction-owned application lock per
// resource (sp_getapplock, in lock-name order, so claimers needing several
// cannot deadlock), counts each resource's holders after the locks are
// granted, and admits the candidates in claim order while permits are
// free, skipping (never waiting for) the others. Claimers of one resource
// thus take turns, in any number of processes, and never over-admit;
// claims of jobs without resources take no application lock.
//
// Owner writes (CompleteJobs, ReleaseJobs) are one UPDATE ... FROM a VALUES
// list joined by primary key per 200 (600) entries, fenced by job_id,
// claim_seq and status = 'RUNNING', returning with OUTPUT which entries
// applied; a batch is one transaction. Inserts are multi-row INSERT
// statements (90 jobs each) in one transaction; idempotency keys are
// unique through a filtered unique index, and the keys of a batch are
// looked up WITH (UPDLOCK, HOLDLOCK) first, so a concurrent insert of the
// same key waits and then finds it.
//
// # Retries
//
// Every store transaction that fails with a retryable error — deadlock
// victim (1205), lock timeout (1222), snapshot conflict (3960), a permit
// lock not granted in time, Azure SQL transient errors, or a lost
// connection (driver.ErrBadConn, EOF, network errors); see [IsRetryable] —
// runs again from the start, up to [Options.Retries] times (3 by default)
// with a short growing pause. A failure of the commit itself leaves its
// outcome unknown: a claim then first reads which of the jobs it named are
// RUNNING under the node at the claim's time and returns them, and a
// completion batch recognizes the jobs that already show what it wrote, so
// a retry neither strands a claimed job nor reports a completion that
// applied as superseded. [Store.InsertJobsTx] is not retried: the
// application's transaction is the unit to run again.
//
// # Capabilities
//
// Besides [spi.Store], a [Store] implements:
//
//   - [spi.TxInserter] for *sql.Tx: InsertJobsTx inserts jobs inside a
//     transaction that the application began on [Store.DB], so that the
//     jobs exist only if it commits.
//   - [spi.ClaimChecker]: CheckClaims tells in one statement, by primary
//     key, which claims are still current.
//   - [spi.LeaseStore]: named leases in scheduler_lease, acquired, renewed
//     or taken over (once now reaches the expiry) in one transaction under a
//     key-range lock (UPDLOCK, SERIALIZABLE), released only by their owner.
//   - [spi.JobStateStore]: per-job, per-namespace JSON state in
//     scheduler_job_state, stored as VARBINARY(MAX) (byte for byte) with a
//     version for compare-and-set; a fenced write holds a shared lock on
//     the job's row while it checks that the job is RUNNING with the
//     writer's claim sequence.
//   - [spi.JobPropertyStore]: write-once properties in
//     scheduler_job_property, indexed by (key, value, job) for
//     FindJobsByProperty; prefix queries compare bytes, so no character is
//     a wildcard. A key is at most 255 bytes and a value 1,024 (UTF-8).
//   - [spi.NodeTaskStore]: the tasks of each node, recorded with its
//     heartbeat in scheduler_node.task_names (a JSON array), and the
//     pending jobs per task, counted over the claim index.
//
// It does not implement [spi.WakeupListener]: SQL Server has no
// LISTEN/NOTIFY, and the engine's adaptive polling finds new work.
//
// # Representation
//
// Times are DATETIME2(6) holding the UTC wall clock (microsecond precision),
// sent as DATETIME2 parameters and returned as UTC [time.Time] values
// whatever the DSN's timezone setting; a zero time is stored as NULL
// (except the scheduled time, which is never NULL). Durations (the backoff
// parameter) are BIGINT microseconds. Job ids are BINARY(16) holding the
// UUID's 16 bytes in their usual order: SQL Server compares BINARY byte by
// byte, so ListJobs pages in UUID order. (UNIQUEIDENTIFIER is avoided on
// purpose: SQL Server sorts it by its last six bytes first, and go-mssqldb
// swaps the byte order of its first three groups, so neither its order nor
// its bytes would match the UUID's.) Names that are compared — tags,
// idempotency keys, node ids, resources, lease names and owners, state
// namespaces, property keys and values — are VARBINARY holding their UTF-8
// bytes, so comparisons are exact: no case folding, no collation, no
// trailing-space padding. Payloads and results are VARBINARY(MAX); nil and
// empty are kept apart. Params are a JSON object in an NVARCHAR(MAX)
// column. Rows with an unknown status, an out-of-range priority, an id that
// is not 16 bytes or params that are not a JSON object of strings are
// reported by GetJob and ListJobs as errors wrapping [spi.ErrCorruptJob]
// that name the job and the problem.
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
package sqlserver
