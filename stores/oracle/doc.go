// Package oracle is the Ratchet store for Oracle Database: an [spi.Store]
// on database/sql and go-ora v2 (pure Go, no Instant Client), for any
// number of worker nodes sharing one schema.
//
// It needs Oracle Database 23ai or later (23ai Free included): its
// migrations use CREATE ... IF NOT EXISTS, and its inserts multi-row
// VALUES lists, both new in 23ai.
//
// Verification: no Oracle database can run on this project's machines, so
// CI verifies this package only through unit tests that need no server (the
// text and binds of every statement, type and time mapping, error
// classification, DSN validation, migration splitting, and the claim and
// completion paths against a fake database/sql driver, retries included).
// The store conformance kit (tck.Run) runs against a real database only
// where one is given in RATCHET_TEST_ORACLE_DSN or a Docker engine can
// start gvenzl/oracle-free:23-slim (internal/dbtest); elsewhere that test
// skips, saying why.
//
// # Opening
//
// [Open] parses and checks a go-ora URL ([ParseDSN]), creates a connection
// pool that the store owns and connects within a bounded time
// ([Options.ConnectTimeout], 10 s by default), with an error naming the
// server when it cannot. [New] uses a *sql.DB the application already has.
// The store works in the schema of the user it logs in as: give each
// installation its own user.
//
// With [Options.ApplyMigrations], opening brings the schema to the latest
// version of the versioned SQL files of the ddl module (ddl/oracle);
// [Migrate] does the same on its own. Oracle commits every DDL statement on
// its own, so the files are written to be idempotent (CREATE ... IF NOT
// EXISTS, a guarded ALTER, version rows inserted only when missing): an
// interrupted migration completes when it runs again, and nodes starting
// together converge. Without ApplyMigrations the store only checks the
// schema and fails with an error wrapping [spi.ErrSchema] when it is
// missing, partial, older or newer than this code. The same files can be
// applied with SQL*Plus, SQLcl, Flyway or Liquibase instead.
//
// # Claim strategy
//
// Effective priority (see [spi.EffectivePriority]) grows with waiting time
// only inside a priority level, so the best N jobs overall are among the
// best N of each of the five levels. ClaimJobs is one transaction: a UNION
// ALL of FETCH FIRST N range scans, one per task the claim lists and
// level, of the index on (status, task_name, priority, scheduled_time,
// job_id) returns at most 5·N candidates per task, merged in Go in
// exact aging order (spi.EffectivePriority, then scheduled time, then id).
// Oracle allows no row limit with FOR UPDATE, so the scans take no locks;
// the best candidates are then locked with SELECT ... FOR UPDATE SKIP
// LOCKED, which re-checks under the lock that each is still PENDING and
// passes over rows other claimers hold, and the next best take their
// places, round after round, until N are locked or the candidates run out.
// One UPDATE moves the locked jobs to RUNNING and one SELECT reads them
// back with their tags (JSON_ARRAYAGG). The cost is O(N log backlog)
// whatever the size of the backlog.
//
// Only jobs of the tasks the claim lists ([spi.ClaimParams].Tasks, the
// tasks the node registered) are read: the claim index is led by the task,
// so each claim reads one range per task and level, and a backlog of a
// task no claimer lists (a node of a mixed fleet that lacks it) costs
// nothing; `ratchet bench --mode mixedfleet` measures it. A claim that
// lists no task first reads the distinct tasks of the pending jobs
// (sqlcore.ClaimTasks).
//
// A node's tag affinity ([spi.ClaimParams].Tags) is part of the range
// scans: All compiles to a COUNT of the job's matching tags, Any to EXISTS
// and None to NOT EXISTS, each a probe of the tag table's primary key with
// the tags as binds, so jobs the node may not run never block those behind
// them.
//
// A job naming a resource holds a permit exactly while it is RUNNING, so
// completion, retry, failure, release and recovery give it back with no
// bookkeeping. The scans pass over jobs whose resource is full. When
// candidates name resources, the claim locks each resource's row in
// scheduler_resource (SELECT ... FOR UPDATE in name order, so claimers
// needing several cannot deadlock; the row is created on first use), counts
// the resource's RUNNING holders in a statement that starts after the
// locks, and admits candidates in claim order while permits are free,
// skipping (never waiting for) the others. Claimers of one resource thus
// take turns, in any number of sessions, and never over-admit; claims of
// jobs without resources lock no resource row. (DBMS_LOCK would need an
// EXECUTE grant that ordinary users lack.)
//
// Owner writes are fenced by job_id, claim_seq and status = 'RUNNING': a
// batch locks its RUNNING jobs with one SELECT ... FOR UPDATE, which tells
// which claims are current, and writes those in one PL/SQL block of fenced
// UPDATEs per 100 completions (one round trip), all in one transaction.
// Inserts are multi-row INSERT statements (40 jobs each) in one
// transaction; idempotency keys are unique through a unique index (Oracle
// leaves NULL keys out of it), and an insert that loses a race for a key
// (ORA-00001 on that index) runs again and finds it.
//
// # Retries
//
// Every store transaction that fails with a retryable error — a deadlock
// (ORA-00060), a serialization failure (ORA-08177), a busy resource, a
// session or instance that went away, or a lost connection
// (driver.ErrBadConn, EOF, network errors); see [IsRetryable] — runs again
// from the start, up to [Options.Retries] times (3 by default) with a short
// growing pause. A failure of the commit itself leaves its outcome unknown:
// a claim then first reads which of the jobs it named are RUNNING under the
// node at the claim's time and returns them, and a completion batch
// recognizes the jobs that already show what it wrote. [Store.InsertJobsTx]
// is not retried: the application's transaction is the unit to run again.
//
// # Capabilities
//
// Besides [spi.Store], a [Store] implements:
//
//   - [spi.TxInserter] for *sql.Tx: InsertJobsTx inserts jobs inside a
//     transaction that the application began on [Store.DB], so that the
//     jobs exist only if it commits.
//   - [spi.ClaimChecker]: CheckClaims reads the claim sequences of the
//     RUNNING jobs among the refs by primary key, in one statement per 500.
//   - [spi.LeaseStore]: named leases in scheduler_lease, acquired, renewed
//     or taken over (once now reaches the expiry) with one MERGE, released
//     only by their owner.
//   - [spi.JobStateStore]: per-job, per-namespace JSON state in
//     scheduler_job_state, stored as a BLOB (byte for byte) with a version
//     for compare-and-set; every write locks the job's row, so a fenced
//     write checks that the job is RUNNING with the writer's claim sequence
//     while nothing can change it.
//   - [spi.JobPropertyStore]: write-once properties in
//     scheduler_job_property, indexed by (key, value, job) for
//     FindJobsByProperty; prefix queries compare the leading characters, so
//     no character is a wildcard.
//   - [spi.NodeTaskStore]: the tasks of each node, recorded with its
//     heartbeat in scheduler_node.task_names (a JSON array), and the
//     pending jobs per task, counted over the claim index.
//
// It does not implement [spi.WakeupListener]; the engine's adaptive polling
// finds new work.
//
// # Representation
//
// Times are TIMESTAMP(6) holding the UTC wall clock (microsecond
// precision), bound as TIMESTAMP (go-ora's TimeStamp; a time.Time would be
// bound WITH TIME ZONE and compared in the session's zone) and returned as
// UTC [time.Time] values; a zero time is stored as NULL (except the
// scheduled time, which is never NULL). Durations (the backoff parameter)
// are NUMBER(19) microseconds. Job ids are RAW(16) holding the UUID's 16
// bytes, whose byte order is the UUID order, so ListJobs pages by job_id.
// Payloads and results are BLOBs: nil is NULL and an empty slice
// EMPTY_BLOB(), so they stay apart; values up to 2,000 bytes are bound
// inline, larger ones as temporary LOBs (Oracle refuses several long binds
// in one statement). Text is VARCHAR2 with character semantics and binary
// comparison, long text (last errors, params) a CLOB. Oracle stores the
// empty string as NULL, so text that may be empty (task names, errors,
// property values...) reads NULL back as "", and the store refuses what it
// cannot keep apart: an empty tag or state namespace. Params are a JSON
// object in a CLOB. Rows with an unknown status, an out-of-range priority,
// an id that is not 16 bytes or params that are not a JSON object of
// strings are reported by GetJob and ListJobs as errors wrapping
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
package oracle
