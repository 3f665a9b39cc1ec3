// Package postgres is the Ratchet store for PostgreSQL: an [spi.Store] on
// pgx v5 and its connection pool (pgxpool), for any number of worker nodes
// sharing one database.
//
// It needs PostgreSQL 14 or later (it relies on EXTRACT returning numeric,
// for exact aging arithmetic) and is tested on PostgreSQL 15.
//
// # Opening
//
// [Open] parses a DSN, creates a pool that the store owns and connects
// within a bounded time ([Options.ConnectTimeout], 10 s by default), with an
// error naming the server when it cannot. [New] uses a pool the application
// already has. Both work in one schema ([Options.Schema], "public" by
// default): every statement names its tables qualified by that schema, so
// the connections' search_path does not matter, and several independent
// Ratchet installations can share a database in different schemas.
//
// With [Options.ApplyMigrations], opening brings the schema to the latest
// version of the versioned SQL files of the ddl module (ddl/postgresql),
// creating the schema when it is missing; [Migrate] does the same on its
// own (the `ratchet migrate` command calls it). Each migration runs in a
// transaction that holds a transaction-scoped advisory lock and records its
// version in ratchet_schema_version, so nodes starting together apply each
// migration once. Without ApplyMigrations the store only checks the schema
// and fails with an error wrapping [spi.ErrSchema] when it is missing,
// partial (Ratchet tables without a recorded version, or a recorded version
// with tables missing), older or newer than this code. The same files can be
// applied with Flyway, Liquibase or psql instead: they hold plain SQL with
// unqualified names, created in the first schema of the search_path.
//
// # Claim strategy
//
// Effective priority (see [spi.EffectivePriority]) grows with waiting time
// only inside a priority level, so the best N jobs overall are among the
// best N of each of the five levels. ClaimJobs is one statement: five CTEs
// each take, per task the claim lists (a LATERAL subquery over the array
// of tasks), the first N due PENDING jobs of one level in (scheduled_time,
// job_id) order, locked with FOR NO KEY UPDATE SKIP LOCKED (the queue
// pattern of FOR UPDATE SKIP LOCKED, in the weaker lock mode that the
// UPDATE takes anyway), each a range scan of the partial index
// idx_scheduler_job_claim on (task_name, priority, scheduled_time, job_id)
// WHERE status = 'PENDING'; then the at most 5·N candidates per task are ranked by
// effective priority (computed exactly in numeric), scheduled time and id,
// and one UPDATE moves the best N to RUNNING, finding them by primary key,
// and returns them with their tags. The cost is O(N log backlog) whatever
// the size of the backlog, aging is exact, and concurrent claimers skip
// each other's rows instead of waiting. A claimed row that cannot be read
// back as a job (see [spi.ErrCorruptJob]) is moved to FAILED with the
// problem as its last error instead of being returned, so one bad row
// cannot block the queue.
//
// Only jobs of the tasks the claim lists ([spi.ClaimParams].Tasks, the
// tasks the node registered) are read: the claim index is led by the task,
// so each claim reads one range per task and level, and a backlog of a
// task no claimer lists (a node of a mixed fleet that lacks it) costs
// nothing; `ratchet bench --mode mixedfleet` measures it. A claim that
// lists no task first reads the distinct tasks of the pending jobs
// (sqlcore.ClaimTasks).
//
// A node's tag affinity ([spi.ClaimParams].Tags) is part of the per-level
// range scans: All compiles to a COUNT of the job's matching tags, Any to
// EXISTS and None to NOT EXISTS, each a probe of the tag table's primary
// key with the tags passed as text arrays (tag = ANY($n)); there is one
// statement per filter shape, so each is prepared and planned once. Jobs
// the node may not run are passed over inside the index scan and never
// block those behind them.
//
// A job naming a resource holds a permit exactly while it is RUNNING, so
// completion, retry, failure, release and recovery give it back with no
// bookkeeping. The range scans also pass over jobs whose resource is full
// (as many RUNNING holders, counted through the partial index
// idx_scheduler_job_resource, as the job's limit). When none of the best N
// candidates names a resource, the claim is the single statement above;
// otherwise that statement claims nothing and the claim runs as one
// transaction: lock the candidates (SKIP LOCKED), take a transaction-scoped
// advisory lock per distinct resource among them in key order, count each
// resource's holders in a statement of its own (so its snapshot sees every
// claim that held the lock before), admit the candidates in claim order
// while counting the permits taken (skipping, never waiting for, jobs over
// their limit), and update the admitted ones by primary key. Claimers of
// one resource thus take turns, in any number of processes, and never
// over-admit; claims of jobs without resources take no lock.
//
// Owner writes (CompleteJobs, ReleaseJobs) are one statement per batch, an
// UPDATE ... FROM unnest of the batch's arrays fenced by job_id, claim_seq
// and status = 'RUNNING', returning which entries applied. Inserts are one
// INSERT ... SELECT FROM unnest statement per batch (tags and the wakeup in
// the same statement); from [CopyThreshold] jobs without an idempotency key
// they are written with COPY in one transaction. Orphan recovery is one
// statement. Every statement is prepared once per connection and cached by
// pgx. Behind a transaction-pooling PgBouncer, set pgx's
// default_query_exec_mode (for example to cache_describe) in the DSN.
//
// # Capabilities
//
// Besides [spi.Store], a [Store] implements:
//
//   - [spi.TxInserter] for pgx.Tx: InsertJobsTx inserts jobs inside a
//     transaction that the application owns (ratchet.InTx), so that they
//     exist only if it commits; the wakeup is then delivered only on commit.
//   - [spi.WakeupListener]: every insert publishes pg_notify on a channel
//     named after the schema ([Store.WakeupChannel]) in the same transaction,
//     so it is delivered exactly when the jobs become visible; the payload
//     names the priority and the source node of the write
//     ([spi.SourceFromContext]). ListenWakeups holds a dedicated LISTEN
//     connection and reconnects with backoff when it drops.
//   - [spi.ClaimChecker]: CheckClaims tells in one statement, by primary
//     key, which claims are still current.
//   - [spi.LeaseStore]: named leases in scheduler_lease, acquired, renewed
//     or taken over (once now reaches the expiry) with one atomic INSERT ...
//     ON CONFLICT DO UPDATE ... WHERE, released only by their owner.
//   - [spi.JobStateStore]: per-job, per-namespace JSON state in
//     scheduler_job_state, stored as bytea (byte for byte) with a version
//     for compare-and-set; each write is one statement, and a fenced one
//     checks, with the job row locked FOR SHARE, that the job is RUNNING
//     with the writer's claim sequence.
//   - [spi.JobPropertyStore]: write-once properties in
//     scheduler_job_property, indexed by (key, value, job) for
//     FindJobsByProperty; prefix queries use starts_with, so no character
//     is a wildcard. Keys and values are text: they cannot hold NUL bytes,
//     and the index limits a key and value together to about 2,700 bytes.
//   - [spi.NodeTaskStore]: the tasks of each node, recorded with its
//     heartbeat in scheduler_node.task_names (a JSON array), and the
//     pending jobs per task, counted over the claim index.
//
// The state and property rows of a job are deleted with it (ON DELETE
// CASCADE).
//
// # Representation
//
// Times are timestamptz (microsecond precision), returned as UTC
// [time.Time] values; a zero time is stored as NULL (except the scheduled
// time, which is never NULL). Durations (the backoff parameter) are bigint
// microseconds. Job ids are uuid, whose order is the byte order of the
// UUIDs, so ListJobs pages by job_id. Payloads and results are bytea and
// round-trip byte for byte; nil and empty are kept apart. Params are a JSON
// object in a text column. Tags are rows of scheduler_job_tag (duplicates
// dropped) and come back sorted. Rows with an unknown status, an
// out-of-range priority or params that are not a JSON object of strings are
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
package postgres
