// Package mysql is the Ratchet store for MySQL and MariaDB: an [spi.Store]
// on database/sql and go-sql-driver/mysql, for any number of worker nodes
// sharing one database. It is the MySQL dialect of the stores' one SQL core
// (stores/internal/sqlcore, whose documentation says what every SQL store
// does the same way); this package supplies MySQL's syntax for the core's
// portable statements, its own statements, codecs, session settings and
// error classification (its inserts are chunked by the server's packet size
// as well as by rows), and its own completions: one UPDATE ... JOIN per
// batch, fenced row by row, MariaDB having no UPDATE ... RETURNING; when it
// changed fewer rows than the batch has completions, the core reads the
// jobs back to tell which applied.
//
// It needs MySQL 8.0 or later or MariaDB 10.6 or later (FOR UPDATE SKIP
// LOCKED) with InnoDB, and is tested on MariaDB 10.11.
//
// # Opening
//
// [Open] takes a go-sql-driver DSN (user:pass@tcp(host:3306)/db) or a URL
// (mysql://user:pass@host:3306/db), creates a pool that the store owns
// ([Options.MaxConns], 16 by default) and contacts the server within
// [Options.ConnectTimeout] (10 s by default), with an error naming the
// address when it cannot; it refuses servers older than the minimum
// versions. The session runs READ COMMITTED (no gap locks; every statement
// reads the latest committed rows), a strict SQL mode (a value that does
// not fit fails instead of being truncated), UTC, found-rows counts and
// client-side interpolation (one round trip a statement). Every statement
// names its tables qualified by the database ([Options.Database], else the
// DSN's), so several installations can share a server.
//
// With [Options.ApplyMigrations], opening applies the missing ddl/mysql
// files, creating the database when it is missing; [Migrate] and
// [MigrateDSN] do the same on their own. MySQL commits every DDL statement
// on its own, so migrators hold a named lock (GET_LOCK) and apply the
// files statement by statement, each recording its version last; the
// tables of a later version than the recorded one are reported as a
// migration that failed half-way.
//
// # Statements
//
// The claim's candidates are the core's portable range scans of
// idx_scheduler_job_claim, one per task and level, each locked with FOR
// UPDATE SKIP LOCKED. Each scan is guarded by its level's newest due
// entry (a MAX(scheduled_time) the optimizer reads as one index probe,
// backwards from now), and a level without one is not scanned: InnoDB's
// forward scan of an empty level would go on through the delete-marked
// entries at the start of the next level that purge has not removed yet
// (hundreds to thousands of pages per level under load; cross-node
// enqueue-to-start p50 on MariaDB at 1,000 jobs/s 3.9–4.4 ms against
// 4.5–5.3 ms without, burn-down work about +10 %). Permits lock each resource's
// row in scheduler_resource (in name order) by writing it (its claims
// counter, so that Galera certifies it), then count its holders.
// MySQL has no partial indexes: since migration 13 the claim index is
// keyed by the virtual column claim_task (the task of a PENDING job, NULL
// otherwise) and the holders' index by resource_status (the status of a
// job naming a resource, NULL otherwise), so that a job's completion, and
// every status change of a job naming no resource, leaves them alone;
// the statements test those columns instead of status.
// Orphans are found with a plain read and locked by primary key, so no gap
// of an index is locked.
//
// Deadlocks (1213), lock wait timeouts (1205) and lost connections are
// transient: a transaction runs again from the start, up to 5 attempts
// with a pause doubling from 10 ms. A connection lost during COMMIT leaves
// the outcome unknown: the transaction runs again knowing it (the core's),
// so a claim adopts the jobs the lost COMMIT took, and a completion, a
// release or an insert recognises its own write. [Store.InsertJobsTx] runs
// in the application's transaction and retries nothing.
//
// # Galera
//
// A DSN may list several servers (mysql://user@db1:3306,db2:3306/db, or
// tcp(db1:3306,db2:3306) in the driver's form): a new connection goes to
// the server the last one reached, and to the next that answers when that
// one does not, so a fleet on one DSN writes through one node of a
// MariaDB Galera cluster and moves on when it is lost. Galera reports a
// certification conflict with another node's commit as a deadlock (1213)
// and a node out of quorum as 1047; both are transient. GET_LOCK is local
// to a Galera node, so on a node with wsrep_on the migrator also takes a
// row of the table ratchet_migration_lock, which every node sees.
//
// Besides [spi.Store] a [Store] implements [spi.TxInserter] for *sql.Tx
// (begun on [Store.DB]), [spi.ClaimChecker], [spi.LeaseStore],
// [spi.JobStateStore], [spi.JobPropertyStore] and
// [spi.NodeTaskStore]. It does not implement [spi.WakeupListener]: MySQL
// has no LISTEN/NOTIFY, and the engine's adaptive polling (with its local
// coordinator) finds new work.
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
// of the jobs it moves. MySQL has no partial indexes: the indexes of the
// waits lead with outcome (NULL while waiting).
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
// scheduler_audit numbered by the database (AUTO_INCREMENT, whose counter
// InnoDB keeps across restarts; the number comes back through the result's
// LastInsertId: MySQL has no INSERT ... RETURNING). The listing reads the
// primary key backwards, a page per keyset; the deletion by age reads
// idx_scheduler_audit_time (audit_time, seq) and deletes by primary key.
// An entry appended with a zero Time gets the process's wall clock.
//
// A [Store] implements [spi.StatsSampleStore] (migration 22): a sample is a
// row of scheduler_stats_sample keyed by its minute, the first of a minute
// kept (an INSERT whose duplicate key means that the minute has its sample);
// the same transaction deletes the samples older than
// spi.StatsSampleRetention, and the reads are ranges of the primary key.
//
// # Representation
//
// Times are DATETIME(6) in UTC (truncated to the microsecond; years 1000 to
// 9999). Job ids are BINARY(16), the UUID's bytes. Payloads and results are
// LONGBLOB, nil and empty kept apart. Names that are compared or unique
// (idempotency keys, tags, node ids, resources, leases, namespaces,
// property keys and values) are VARBINARY: compared byte for byte whatever
// the collation, most limited to 255 bytes (property values to 1,024).
// Params are a JSON object in a TEXT column; tags come back sorted.
// Corrupt rows are reported as errors wrapping [spi.ErrCorruptJob].
package mysql
