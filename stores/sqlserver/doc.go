// Package sqlserver is the Ratchet store for Microsoft SQL Server: an
// [spi.Store] on database/sql and go-mssqldb, for any number of worker
// nodes sharing one database. It is the SQL Server dialect of the stores'
// one SQL core (stores/internal/sqlcore, whose documentation says what
// every SQL store does the same way); this package supplies SQL Server's
// syntax for the core's portable statements, its own statements, codecs
// and error classification.
//
// It needs SQL Server 2022 or later (or Azure SQL Database).
//
// Verification: no SQL Server can run on this project's machines, so CI
// verifies this package only through unit tests that need no server (the
// text of every statement, type and time mapping, error classification,
// DSN validation, and every store method against a fake database/sql
// driver, retries included). The store conformance kit (tck.Run) runs
// against a real server only where one is given in
// RATCHET_TEST_SQLSERVER_DSN or a Docker engine can start
// mcr.microsoft.com/mssql/server:2022 (internal/dbtest); elsewhere that
// test skips, saying why.
//
// # Opening
//
// [Open] parses and checks a DSN ([ParseDSN]), creates a pool that the
// store owns and connects within [Options.ConnectTimeout] (10 s by
// default), with an error naming the server when it cannot. [New] uses a
// *sql.DB the application already has. The store works in the connection's
// database and default schema: give each installation its own database.
// With [Options.ApplyMigrations], opening applies the missing ddl/sqlserver
// files, batch by batch (GO lines), each file in one transaction under an
// application lock; [Migrate] does the same on its own.
//
// # Statements
//
// The claim's candidates are the core's portable TOP (N) range scans of
// the filtered claim index, one per task and level, WITH (UPDLOCK,
// READPAST, ROWLOCK), SQL Server's SKIP LOCKED; one batch moves the chosen
// jobs to RUNNING (OUTPUT) and reads them back. Permits take a transaction-owned application lock per
// resource (sp_getapplock, in lock-name order). Completions are one
// UPDATE ... FROM a VALUES list per 200 entries, returning with OUTPUT
// which applied. SQL Server has no loose index scan: a claim of any task
// reads the distinct pending tasks by scanning the claim index. Deadlock
// victims (1205), lock timeouts (1222), snapshot conflicts, Azure SQL's
// transient errors and lost connections are transient (see [IsRetryable]):
// the transaction runs again, up to [Options.Retries] times.
// [Store.InsertJobsTx] is not retried.
//
// Besides [spi.Store] a [Store] implements [spi.TxInserter] for *sql.Tx,
// [spi.ClaimChecker], [spi.LeaseStore],
// [spi.JobStateStore], [spi.JobPropertyStore] and [spi.NodeTaskStore]; not
// [spi.WakeupListener].
//
// # Signals
//
// A [Store] implements [spi.SignalStore] (migration 9): a job inserted
// with a signal wait is WAITING, and its wait is a row of
// scheduler_job_signal (outcome NULL while it waits). A delivery, a
// timeout or a cancel is one transaction whose guarded UPDATE of the job
// (WAITING to PENDING or CANCELLED) applies once, so racing resolutions
// resolve a wait once; the others fail wrapping [spi.ErrInvalidState].
// The claim never reads the waits; GetJob, ListJobs and WorkflowJobs fill
// Job.Signal with one more query per page, and ArchiveJobs drops the waits
// of the jobs it moves. The waits are found through filtered indexes of
// the unresolved ones (by key and name, by deadline).
//
// # Batches
//
// A [Store] implements [spi.BatchStore] (migration 10): a batch is a row
// of scheduler_batch, its children jobs of the batch's id (workflow_id).
// Nothing on that row changes when a child finishes, so a batch of any
// size adds no write to its children's completions. A chunk is one
// transaction: the guarded advance of the row's persisted count (still
// the chunk's offset, the batch open), the children's insert and one
// UPDATE per IN list that makes them the batch's. The batch finisher
// reads the sealed open batches none of whose children is unfinished
// (probes of idx_scheduler_job_workflow_status) and ends each in a
// transaction of its own: the guarded UPDATE of the row (outcome still
// NULL) and the insert of its callback job, so that racing finishers end
// a batch once. ArchiveJobs leaves the children of an open batch in place.
//
// # Audit log
//
// A [Store] implements [spi.AuditLog] (migration 12): an entry is a row of
// scheduler_audit numbered by the database (IDENTITY; the number comes
// back through INSERT ... OUTPUT INSERTED.seq). The listing reads the
// primary key backwards, a page per keyset; the deletion by age reads
// idx_scheduler_audit_time (audit_time, seq) and deletes by primary key.
// An entry appended with a zero Time gets the process's wall clock.
//
// A [Store] implements [spi.StatsSampleStore] (migration 19): a sample is a
// row of scheduler_stats_sample keyed by its minute, the first of a minute
// kept (an INSERT whose duplicate key means that the minute has its sample);
// the same transaction deletes the samples older than
// spi.StatsSampleRetention, and the reads are ranges of the primary key.
//
// # Representation
//
// Times are DATETIME2(6) holding the UTC wall clock, returned as UTC
// whatever the DSN's timezone. Job ids are BINARY(16), the UUID's bytes in
// UUID order (UNIQUEIDENTIFIER is avoided: SQL Server sorts it by its last
// six bytes first, and go-mssqldb swaps its first three groups). Names
// that are compared (tags, keys, node ids, resources, leases, namespaces,
// property keys and values) are VARBINARY holding UTF-8, so comparisons
// are exact; a property key is at most 255 bytes and a value 1,024.
// Payloads, results and state are VARBINARY(MAX), params NVARCHAR(MAX).
// Corrupt rows are reported as errors wrapping [spi.ErrCorruptJob].
package sqlserver
