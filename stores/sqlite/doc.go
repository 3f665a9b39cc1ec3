// Package sqlite is the embedded, durable Ratchet store: an [spi.Store] on a
// single SQLite database file, through the pure-Go driver modernc.org/sqlite
// (no cgo).
//
// # Opening
//
// [Open] creates the file if needed and brings its schema up to date with
// the versioned SQL files of the ddl module (ddl/sqlite), each applied in a
// transaction that records its version in ratchet_schema_version. It refuses,
// with an error wrapping [spi.ErrSchema] and without writing anything, a
// file that is not an SQLite database, an SQLite database holding tables but
// no ratchet_schema_version table (not a Ratchet database), and a database
// whose schema is newer than this code.
//
// The database runs in WAL journal mode with synchronous=FULL, foreign keys
// on and a busy timeout ([Options.BusyTimeout]). Every transaction begins
// with BEGIN IMMEDIATE, so a writer takes the write lock at its start and
// never fails on a lock upgrade. The store uses one connection: operations of
// one process are serialized, and several processes may share the file
// (SQLite serializes their writes; each waits up to the busy timeout).
//
// # Claim strategy
//
// Effective priority (see [spi.EffectivePriority]) grows with waiting time
// only inside a priority level, so the best N jobs overall are among the best
// N of each of the five levels. ClaimJobs therefore reads, inside one
// IMMEDIATE transaction, the first N due PENDING jobs of each level in
// (scheduled_time, job_id) order — five range scans of the index on
// (status, priority, scheduled_time, job_id), a UNION ALL of five LIMITed
// subqueries — merges those at most 5·N candidates in Go by effective
// priority descending, scheduled time ascending and id ascending, and moves
// the first N to RUNNING with one UPDATE ... RETURNING. The cost is
// O(N log backlog) whatever the size of the backlog, and aging is exact.
// A claimed row that cannot be read back as a job (see [spi.ErrCorruptJob])
// is moved to FAILED with the problem as its last error instead of being
// returned, so that one bad row cannot block the queue.
//
// Owner writes (CompleteJobs, ReleaseJobs) are fenced by
// job_id, claim_seq and status = 'RUNNING'; a batch is one transaction.
//
// # Capabilities
//
// Besides [spi.Store], a [Store] implements [spi.TxInserter] for *sql.Tx:
// InsertJobsTx inserts jobs inside a transaction that the application began
// on [Store.DB], so that the jobs exist only if it commits. Tags are kept in
// scheduler_job_tag in the order given (duplicates dropped), so tag affinity
// compiles to EXISTS / NOT EXISTS.
//
// # Representation
//
// Times are INTEGER unix microseconds, UTC; they are returned as UTC
// [time.Time] values with microsecond precision, and a zero time is stored as
// NULL (except the scheduled time, which is never NULL). Durations (the
// backoff parameter) are INTEGER microseconds. Job ids are stored as the
// canonical 36-character lower-case UUID text, whose byte order is the order
// of the UUIDs, so ListJobs pages by job_id. Payloads and results are BLOBs;
// nil and empty are kept apart. Params are a JSON object in a TEXT column.
// Rows with an unknown status, an out-of-range priority, an id that is not a
// canonical UUID or params that are not a JSON object of strings are reported
// by GetJob and ListJobs as errors wrapping [spi.ErrCorruptJob] that name the
// job and the problem.
package sqlite
