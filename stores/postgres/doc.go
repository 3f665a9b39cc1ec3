// Package postgres is the Ratchet store for PostgreSQL: an [spi.Store] on
// pgx v5 and its connection pool (pgxpool), for any number of worker nodes
// sharing one database. It is the PostgreSQL dialect of the stores' one SQL
// core (stores/internal/sqlcore, whose documentation says what every SQL
// store does the same way), reached through pgx's database/sql adapter on
// the same pool, with fast paths of its own on pgx for the hot operations:
// the claim, completions and inserts (COPY), the state writes, and
// LISTEN/NOTIFY wakeups.
//
// It needs PostgreSQL 14 or later (EXTRACT returning numeric, for exact
// aging arithmetic) and is tested on PostgreSQL 15.
//
// # Opening
//
// [Open] parses a DSN, creates a pool that the store owns and connects
// within [Options.ConnectTimeout] (10 s by default), with an error naming
// the server when it cannot. [New] uses a pool the application already
// has. Both work in one schema ([Options.Schema], "public" by default):
// every statement names its tables qualified by it, so search_path does
// not matter and several installations can share a database. With
// [Options.ApplyMigrations], opening applies the missing ddl/postgresql
// files (creating the schema), each in a transaction holding an advisory
// lock; [Migrate] does the same on its own. The files hold plain SQL with
// unqualified names, for Flyway, Liquibase or psql too.
//
// # Fast paths
//
// ClaimJobs is one statement: five CTEs each take, per task the claim
// lists (a LATERAL over a VALUES list, which keeps a generic plan), the
// first N due PENDING jobs of one level from the partial index
// idx_scheduler_job_claim, locked FOR NO KEY UPDATE SKIP LOCKED; the
// candidates are ranked in SQL by effective priority (exact, in numeric),
// and one UPDATE moves the best N to RUNNING and returns them with their
// tags. A claim of 2 to 32 tasks first probes the oldest due job of each
// task and level: while none has waited a priority boost interval, no job
// ages past its level and the order is strict (priority, then due time),
// so the claim reads the levels from the top, each the merge of its
// tasks' ordered index scans (a Merge Append), unlocked, stops at N, and
// locks those of them that no concurrent claim holds; the
// locked scans would read and lock N jobs of every task and level (a
// locked scan hands its rows on unordered, so no merge stops it early).
// With ten tasks at five levels and 200,000 pending, a claim of 500 took
// 11 ms and 2,100 WAL records that way, against 72 ms and 26,600. The
// claims of one task list of 2 to 32 tasks take turns, across nodes: each
// first takes a transaction-scoped advisory lock of the schema and task
// list, in a statement of its own in the claim's round trip, so that the
// claim's snapshot sees the claim before it committed. Claims running at
// once read the same unlocked candidates, and all but the first found
// them taken, after a recheck of each taken row's newer version: in a
// burn-down of ten tasks at five levels, 36 of the 45 claims that took
// over 40 ms claimed nothing, and taking turns raised its work rate by
// 7 to 21 % (median of four alternating pairs 1.18).
// When the best candidates name resources, the claim runs instead
// as one transaction that takes an advisory lock per resource (in key
// order), counts the holders and admits in Go (sqlcore.Admit).
// Completions are one UPDATE ... FROM unnest per batch, joined by job id,
// fenced, returning which entries applied, behind a set_config that has
// PostgreSQL plan each batch for its size (customPlan); inserts are one INSERT ... SELECT FROM unnest
// (tags and wakeup in the same statement), or COPY from [CopyThreshold]
// jobs without a key (its rows written in the binary COPY format by the
// store, not through pgx's type map). The claim travels in one round
// trip behind a set_config that, for the implicit transaction of the two
// only, pins how PostgreSQL plans it (pinnedPlan: a generic plan, no JIT,
// no sequential or bitmap scan), so that its plan depends neither on the backlog's
// size nor on statistics gathered while the table was empty. Statements
// are prepared once per connection; behind a transaction-pooling
// PgBouncer, set pgx's default_query_exec_mode in the DSN.
//
// # Fillfactor and VACUUM
//
// scheduler_job has fillfactor 50 (migration 13): an insert leaves half
// of each page free, so that the claim's and the completion's row
// versions go on the page of the job's row instead of at the end of the
// table. Worked jobs/s were 6 to 13 % higher in a burn-down, inserts
// about 15 % lower; a pending backlog takes twice the pages, a worked-off
// one about a quarter fewer.
//
// A claimed job's entry stays in idx_scheduler_job_claim, in front of
// the pending jobs, until a VACUUM of scheduler_job removes it: every
// claim's scan steps over the entries of all the jobs claimed since the
// last one. Measured on a 2-core VM with 10,000 jobs pending, a claim of
// 200 took 2.8 ms after a VACUUM, 4.0 ms once 100,000 jobs had been
// claimed since, 6.9 ms at 400,000, and 2.8 ms again after the next
// VACUUM. Autovacuum runs when a fifth of the table is dead row versions
// (autovacuum_vacuum_scale_factor 0.2), and a worked job leaves two (its
// claim and its completion): on a table of 10,000,000 rows that is
// 1,000,000 jobs between vacuums, and a server may run no autovacuum at
// all.
//
// So the store runs its own: once it has claimed [Options.VacuumEvery]
// jobs since its last VACUUM ([DefaultVacuumEvery], 100,000), or a
// twentieth of the table's rows when that is more (each VACUUM reads
// every index of the table whole), it runs
//
//	VACUUM (SKIP_LOCKED, TRUNCATE false) scheduler_job
//
// in the background on a pooled connection, one at a time per store.
// SKIP_LOCKED passes when another VACUUM of the table (autovacuum's,
// another node's) is running; TRUNCATE false keeps it from taking the
// lock that would stop the claims while it gives the table's empty tail
// back. A role that may not vacuum the table (neither a superuser nor a
// member of the table's or the database's owner) runs none, and a
// negative VacuumEvery turns them off. A 2,000,000-job burn-down on a
// server with autovacuum off worked 18,375 jobs/s without them (quarters
// 25,224, 20,526, 16,923, 14,239 jobs/s) and 32,031 with them (28,646,
// 33,268, 32,763, 34,025); a 200,000-job one ran at the same rate
// (median ratio 1.03 over five alternating pairs).
//
// With autovacuum on, a lower factor for scheduler_job alone also keeps
// the dead head short between the store's VACUUMs, for example
//
//	ALTER TABLE scheduler_job SET (autovacuum_vacuum_scale_factor = 0.01);
//
// (each VACUUM reads every index of the table, so not far lower), and
// keep the table small by archiving or deleting finished jobs.
//
// Besides [spi.Store] a [Store] implements [spi.TxInserter] for pgx.Tx
// (ratchet.InTx; the wakeup is delivered only on commit),
// [spi.WakeupListener] (pg_notify on [Store.WakeupChannel] in the writing
// transaction, naming the priority and the source node, and the payload
// "claims" after a cancel of RUNNING jobs commits, which ListenWakeups
// delivers with CheckClaims; ListenWakeups holds a LISTEN connection and
// reconnects with backoff), [spi.ClaimChecker],
// [spi.LeaseStore], [spi.JobStateStore] (each write one statement, the job
// row locked FOR SHARE), [spi.JobPropertyStore] and [spi.NodeTaskStore].
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
// of the jobs it moves. A batch with a wait is inserted in a transaction
// (the insert, then the waits), like a batch of a workflow; the waits are
// found through partial indexes of the unresolved ones.
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
// scheduler_audit numbered by the database (an identity column; the number
// comes back through INSERT ... RETURNING seq). The listing reads the
// primary key backwards, a page per keyset; the deletion by age reads
// idx_scheduler_audit_time (audit_time, seq) and deletes by primary key.
// An entry appended with a zero Time gets the process's wall clock.
//
// A [Store] implements [spi.StatsSampleStore] (migration 20): a sample is a
// row of scheduler_stats_sample keyed by its minute, the first of a minute
// kept (an INSERT ... ON CONFLICT DO NOTHING); the same transaction deletes
// the samples older than spi.StatsSampleRetention, and the reads are ranges
// of the primary key.
//
// # Representation
//
// Times are timestamptz (microseconds), returned as UTC; a zero time is
// NULL. Job ids are uuid, whose order is the byte order of the UUIDs.
// Payloads, results and state are bytea, nil and empty kept apart; params
// are a JSON object in a text column; tags come back sorted. Property keys
// and values are text: no NUL bytes, and the index limits a key and value
// together to about 2,700 bytes. Corrupt rows are reported as errors
// wrapping [spi.ErrCorruptJob].
package postgres
