// Package oracle is the Ratchet store for Oracle Database: an [spi.Store]
// on database/sql and go-ora v2 (pure Go, no Instant Client), for any
// number of worker nodes sharing one schema. It is the Oracle dialect of
// the stores' one SQL core (stores/internal/sqlcore, whose documentation
// says what every SQL store does the same way); this package supplies
// Oracle's syntax for the core's portable statements, its own statements,
// binds, codecs and error classification.
//
// It needs Oracle Database 23ai or later (23ai Free included): its
// migrations use CREATE ... IF NOT EXISTS, and its inserts multi-row
// VALUES lists, both new in 23ai.
//
// Verification: no Oracle database can run on this project's machines, so
// CI verifies this package only through unit tests that need no server (the
// text and binds of every statement, type and time mapping, error
// classification, DSN validation, migration splitting, and every store
// method against a fake database/sql driver, retries included). The store
// conformance kit (tck.Run) runs against a real database only where one is
// given in RATCHET_TEST_ORACLE_DSN or a Docker engine can start
// gvenzl/oracle-free:23-slim (internal/dbtest); elsewhere that test skips,
// saying why.
//
// # Opening
//
// [Open] parses and checks a go-ora URL ([ParseDSN]), creates a pool that
// the store owns and connects within [Options.ConnectTimeout] (10 s by
// default), with an error naming the server when it cannot. [New] uses a
// *sql.DB the application already has. The store works in the schema of
// the user it logs in as: give each installation its own user.
//
// With [Options.ApplyMigrations], opening applies the missing ddl/oracle
// files; [Migrate] does the same on its own. Oracle commits every DDL
// statement on its own, so the files are idempotent (CREATE ... IF NOT
// EXISTS, a guarded ALTER, version rows inserted only when missing): an
// interrupted migration completes when it runs again, and nodes starting
// together converge. The same files can be applied with SQL*Plus, SQLcl,
// Flyway or Liquibase instead.
//
// # Statements
//
// Oracle allows no row limit with FOR UPDATE, so the claim's candidates
// (the core's portable FETCH FIRST N range scans of the task-led claim
// index) take no locks; the best ones are then locked with SELECT ... FOR UPDATE
// SKIP LOCKED, round after round, the next best taking the places of rows
// other claimers hold (the dialect's Pick). Permits lock each resource's
// row in scheduler_resource (FOR UPDATE, in name order; DBMS_LOCK would
// need an EXECUTE grant that ordinary users lack). Completions lock the
// batch's RUNNING jobs and write one PL/SQL block of fenced UPDATEs per
// 100 (one round trip); inserts are multi-row INSERTs of 40 jobs. Deadlocks
// (ORA-00060), serialization failures (ORA-08177), busy resources and lost
// connections are transient (see [IsRetryable]): the transaction runs
// again, up to [Options.Retries] times. [Store.InsertJobsTx] is not
// retried.
//
// Besides [spi.Store] a [Store] implements [spi.TxInserter] for *sql.Tx,
// [spi.ClaimChecker], [spi.LeaseStore], [spi.JobStateStore],
// [spi.JobPropertyStore] and [spi.NodeTaskStore]; not
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
// of the jobs it moves. Oracle has no partial indexes: the indexes of the
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
// scheduler_audit numbered by the database (an identity column, ORDER; the
// number comes back through INSERT ... RETURNING seq INTO an output bind).
// The listing reads the primary key backwards, a page per keyset; the
// deletion by age reads idx_scheduler_audit_time (audit_time, seq) and
// deletes by primary key. An entry appended with a zero Time gets the
// process's wall clock.
//
// A [Store] implements [spi.StatsSampleStore] (migration 19): a sample is a
// row of scheduler_stats_sample keyed by its minute, the first of a minute
// kept (an INSERT whose duplicate key means that the minute has its sample);
// the same transaction deletes the samples older than
// spi.StatsSampleRetention, and the reads are ranges of the primary key.
//
// # Representation
//
// Times are TIMESTAMP(6) holding the UTC wall clock, bound as go-ora's
// TimeStamp (a time.Time would be bound WITH TIME ZONE); a zero time is
// NULL. Job ids are RAW(16), the UUID's bytes in UUID order. Payloads and
// results are BLOBs, nil as NULL and empty as EMPTY_BLOB(); values over
// 2,000 bytes are bound as temporary LOBs. Text is VARCHAR2 with character
// semantics and binary comparison, long text (errors, params) a CLOB.
// Oracle stores the empty string as NULL: text that may be empty reads
// back as "", and the store refuses what it cannot keep apart, an empty tag
// or state namespace. Corrupt rows are reported as errors wrapping
// [spi.ErrCorruptJob].
package oracle
