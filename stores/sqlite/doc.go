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
// IMMEDIATE transaction, the first N due PENDING jobs of each task the
// claim lists and level in (scheduled_time, job_id) order — range scans of
// the index on (status, task_name, priority, scheduled_time, job_id), a
// UNION ALL of LIMITed subqueries — merges those at most 5·N candidates
// per task in Go by effective
// priority descending, scheduled time ascending and id ascending, and moves
// the first N to RUNNING with one UPDATE ... RETURNING. The cost is
// O(N log backlog) whatever the size of the backlog, and aging is exact.
// A claimed row that cannot be read back as a job (see [spi.ErrCorruptJob])
// is moved to FAILED with the problem as its last error instead of being
// returned, so that one bad row cannot block the queue.
//
// Only jobs of the tasks the claim lists ([spi.ClaimParams].Tasks, the
// tasks the node registered) are read: the claim index is led by the task,
// so each claim reads one range per task and level, and a backlog of a
// task no claimer lists (a node of a mixed fleet that lacks it) costs
// nothing; `ratchet bench --mode mixedfleet` measures it. A claim that
// lists no task first reads the distinct tasks of the pending jobs
// (sqlcore.ClaimTasks).
//
// A node's tag affinity ([spi.ClaimParams].Tags) is part of those range
// scans: All compiles to a COUNT of the job's matching tags, Any to EXISTS
// and None to NOT EXISTS, each a lookup of the tag table's primary key with
// the tags passed as one JSON array (one statement per filter shape, so
// statements stay cached), so jobs the node may not run are passed over
// inside the scan and never block those behind them.
//
// A job naming a resource holds a permit exactly while it is RUNNING, so
// completion, retry, failure, release and recovery give it back with no
// bookkeeping. The range scans pass over jobs whose resource is full (as
// many RUNNING holders, counted through the partial index
// idx_scheduler_job_resource, as the job's limit); the merged candidates
// are then admitted in claim order while counting the permits the claim
// takes, and a job over its limit is skipped, never waited for. SQLite
// serializes write transactions, so claimers in any number of processes
// never over-admit.
//
// Owner writes (CompleteJobs, ReleaseJobs) are fenced by
// job_id, claim_seq and status = 'RUNNING'; a batch is one transaction.
//
// # Capabilities
//
// Besides [spi.Store], a [Store] implements:
//
//   - [spi.TxInserter] for *sql.Tx: InsertJobsTx inserts jobs inside a
//     transaction that the application began on [Store.DB], so that the
//     jobs exist only if it commits.
//   - [spi.ClaimChecker]: CheckClaims tells in one statement which claims
//     are still current.
//   - [spi.LeaseStore]: named leases in scheduler_lease, acquired, renewed
//     or taken over (once now reaches the expiry) with one atomic upsert,
//     released only by their owner.
//   - [spi.JobStateStore]: per-job, per-namespace JSON state in
//     scheduler_job_state, stored as a BLOB (byte for byte) with a version
//     for compare-and-set; fenced writes check in the writing statement that
//     the job is RUNNING with the writer's claim sequence.
//   - [spi.JobPropertyStore]: write-once properties in
//     scheduler_job_property, indexed by (key, value, job) for
//     FindJobsByProperty; prefix queries compare bytes, so % and _ are no
//     wildcards.
//   - [spi.NodeTaskStore]: the tasks of each node, recorded with its
//     heartbeat in scheduler_node.task_names (a JSON array), and the
//     pending jobs per task, counted over the claim index.
//
// Tags are kept in scheduler_job_tag in the order given (duplicates
// dropped). The state and property rows of a job are deleted with it (ON
// DELETE CASCADE).
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
package sqlite
