// Package sqlite is the embedded, durable Ratchet store: an [spi.Store] on
// a single SQLite database file, through the pure-Go driver
// modernc.org/sqlite (no cgo). It is the SQLite dialect of the stores' one
// SQL core (stores/internal/sqlcore, whose documentation says what every
// SQL store does the same way); this package supplies SQLite's syntax for
// the core's portable statements, its own statements, codecs and file
// handling.
//
// # Opening
//
// [Open] creates the file if needed and brings its schema up to date with
// the versioned SQL files of the ddl module (ddl/sqlite), each applied in an
// IMMEDIATE transaction that records its version in ratchet_schema_version.
// It refuses, with an error wrapping [spi.ErrSchema] and without writing
// anything, a file that is not an SQLite database, an SQLite database
// holding tables but no ratchet_schema_version table (not a Ratchet
// database), and a database whose schema is newer than this code.
//
// The database runs in WAL journal mode with synchronous=FULL, foreign keys
// on and a busy timeout ([Options.BusyTimeout]). Every transaction begins
// with BEGIN IMMEDIATE, so a writer takes the write lock at its start and
// never fails on a lock upgrade. The store uses one connection: operations
// of one process are serialized, and several processes may share the file
// (SQLite serializes their writes; each waits up to the busy timeout).
// SQLite writes one transaction at a time, so the claim's reads need no
// row locks and the permits of a resource are counted, admitted and taken
// inside one writer: claimers in any number of processes never over-admit.
//
// # Statements
//
// The job indexes are partial, as PostgreSQL's are (migration 13): the
// claim index holds the PENDING jobs only, led by their task, and the
// RUNNING, FAILED and WAITING jobs have small indexes of their own in id
// order (orphan recovery, the dead-letter queue, listings). A claim
// deletes one claim-index entry per job and a completion touches none, and
// finished jobs leave one entry, in the index the gauges count the
// settled statuses through (JobStats counts each status group through
// its own partial index). The
// claim's candidates are the core's portable range scans of the
// task-led claim index; one UPDATE ... RETURNING moves the chosen jobs to
// RUNNING, its ids one JSON array read with json_each, so the statement
// keeps one text whatever the batch. Completions are one fenced UPDATE
// each (SQLite has no batching to gain). The other statements are the
// core's portable ones, with ? parameters, ids as their text and times as
// unix microseconds.
//
// The driver compiles the text of every call anew, so the store's
// connection keeps the compiled statements of its recent texts (at most 64,
// 256 KiB of text; a text over 64 KiB is not kept) and runs them again with
// new arguments; a text whose rows are still open when it runs again is
// compiled once more for that run. SQLite recompiles a kept statement
// itself when the schema changes. This takes the compiling out of the hot
// paths: batch submits run about a third faster.
//
// Besides [spi.Store] a [Store] implements [spi.TxInserter] for *sql.Tx
// (begun on [Store.DB]), [spi.ClaimChecker], [spi.LeaseStore],
// [spi.JobStateStore], [spi.JobPropertyStore] and [spi.NodeTaskStore].
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
// of the jobs it moves. The waits are found through partial indexes of
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
// scheduler_audit numbered by the database (INTEGER PRIMARY KEY
// AUTOINCREMENT, so that the number of a deleted newest entry is never
// given again; the number comes back through INSERT ... RETURNING seq).
// The listing reads the primary key backwards, a page per keyset; the
// deletion by age reads idx_scheduler_audit_time (audit_time, seq) and
// deletes by primary key. An entry appended with a zero Time gets the
// process's wall clock.
//
// A [Store] implements [spi.StatsSampleStore] (migration 20): a sample is a
// row of scheduler_stats_sample keyed by its minute, the first of a minute
// kept (an INSERT ... ON CONFLICT DO NOTHING); the same transaction deletes
// the samples older than spi.StatsSampleRetention, and the reads are ranges
// of the primary key.
//
// # Representation
//
// Times are INTEGER unix microseconds, UTC; a zero time is stored as NULL
// (except the scheduled time). Durations are INTEGER microseconds. Job ids
// are the canonical 36-character lower-case UUID text, whose byte order is
// the order of the UUIDs, so ListJobs pages by job_id. Payloads, results
// and state are BLOBs (nil and empty kept apart); params are a JSON object
// in a TEXT column; tags are kept in the order given, duplicates dropped.
// Prefix queries on properties compare bytes, so % and _ are no wildcards.
// A row with an unknown status, an out-of-range priority, an id that is not
// a canonical UUID or params that are not a JSON object of strings is
// reported by GetJob and ListJobs as an error wrapping [spi.ErrCorruptJob]
// naming the job and the problem.
package sqlite
