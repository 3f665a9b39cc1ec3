// Package sqlcore is the one SQL store of Ratchet, written once over a
// statement-level [Dialect]: the PostgreSQL, MySQL/MariaDB, SQLite, SQL
// Server and Oracle stores are each a dialect (a [Database]: its [Syntax],
// codecs, lock primitive; and the statements whose SQL is their own) and a
// driver around a [Core]. The package is internal to the stores: users
// never import it.
//
// # What the core holds
//
// [Core] implements spi.Store and its optional capabilities
// (spi.TxInserter, spi.ClaimChecker, spi.LeaseStore, spi.JobStateStore,
// spi.JobPropertyStore, spi.NodeTaskStore, spi.WorkflowStore,
// spi.SignalStore, spi.AuditLog, ...) over database/sql. It holds the one
// copy of:
//
//   - the claim ([Dialect.Claim], [Core.ClaimJobs]): the tasks a claim
//     reads (ClaimTasks; a backlog of a task the claim does not list costs
//     nothing), the first N due jobs of each task and priority level read by
//     the dialect's candidates statement, ranked in Go with exact aging
//     (Rank: aging is monotone inside a level, so the best N overall are
//     among the best N of each level), admitted against the permits their
//     resources have left (Admit, after the dialect's Holders locked and
//     counted them), moved to RUNNING and read back; a row that cannot be
//     read back is failed into the dead-letter queue instead of blocking
//     the queue; after a COMMIT whose outcome is unknown the next run
//     adopts the jobs it did claim (Adopting);
//   - the owner writes: completions fenced by claim sequence, first of
//     each claim only, in id order (FirstOfEach, Fenced), and recognised
//     when an earlier call already applied them (Recognize, over
//     spi.Completion.AlreadyApplied: a batch sent again after its answer
//     was lost counts as applied, not superseded); releases; claim checks;
//   - orphan recovery with the crash-budget decision (spi.CrashOutcome);
//   - state compare-and-set behind a locking read of the job's fence,
//     write-once properties, leases, node records and their tasks;
//   - inserts with idempotency keys ([Dialect.Insert], Dedupe);
//   - signal waits (migration 9, signal.go): a job inserted with one is
//     WAITING, its wait a row of scheduler_job_signal; each resolution
//     (delivery, timeout, cancel) is a guarded UPDATE of the job that
//     applies once, then of the wait, in one transaction;
//   - batches (migration 10, batch.go): a row of scheduler_batch whose
//     children are jobs of its id; a chunk is the guarded advance of its
//     persisted count with the children's insert, an end the guarded
//     UPDATE of its outcome with the callback's insert, each one
//     transaction;
//   - the audit log (migration 12, audit.go): a row of scheduler_audit
//     per entry, numbered by the database's identity column and handed
//     back as the dialect's Syntax.NewKey says (RETURNING, OUTPUT
//     INSERTED, RETURNING ... INTO, LastInsertId);
//   - the history of the job counts (samples.go): a row of
//     scheduler_stats_sample per minute, the first insert of a minute
//     kept by the primary key, the rows past the retention deleted by
//     the same transaction;
//   - the decoding and validation of a job row ([Dialect.Decode], Row):
//     a corrupt row is an error wrapping spi.ErrCorruptJob that names it;
//   - the schema check and migration loop ([Schema]): partial, foreign,
//     half-migrated and newer schemas refused, each step under the
//     dialect's migration lock, the recorded version checked;
//   - the transaction retry with backoff ([Retry], InTx) over the
//     dialect's classification of transient errors;
//   - the portable statements ([Compile]): the claim's candidate
//     scans, the reads and fenced writes by id or IN list, the moves
//     between states, completions, the multi-row inserts, and the node,
//     lease, state and property rows (an update, then an insert, where
//     the database has no upsert), written once as templates that a
//     dialect's [Syntax] renders (placeholders, table names, argument
//     encodings, row locks, hints, bind limits).
//
// # Adding a SQL database
//
// A store for a sixth database is a package that:
//
//  1. writes its migrations as ddl/<dialect>/NNNN_name.sql, creating the
//     tables and indexes of the other dialects (a task-led claim index on
//     PENDING jobs, a resource index on RUNNING ones) and recording each
//     version in ratchet_schema_version;
//  2. writes a type with the methods of [Database][T], T being the Go
//     type its driver scans a job id into: its Name, its [Syntax]
//     (placeholder, table names, the encodings of ids, times, names and
//     LOBs, its row lock, how an INSERT hands back a generated key:
//     NewKey), the sizes of its multi-row inserts, the job row's codecs
//     (ParseID, IDText, Tags), the prefix read of properties, and the
//     claim's Holders with its lock primitive (pg_advisory_xact_lock, row
//     locks on scheduler_resource, sp_getapplock, SQLite's single
//     writer). A type that lacks one does not compile where it is given
//     to [Compile], and the compiler names the method. It then compiles
//     its [Dialect][T] with Compile, setting the optional fields it needs:
//     MaxIDs (its limit on an IN list), IsDuplicate, TimeOf, its
//     transient errors, and any portable statement it replaces with its
//     own (each a function returning SQL text and arguments);
//  3. fills a [Schema] (how to list its tables, its migration lock, how
//     to split a file into statements);
//  4. embeds a Core, built with New from a Config holding its gate, pool,
//     error wrapper, dialect and Retry (its transient errors: deadlocks,
//     lock timeouts, lost connections), and adds Open, Options and Close;
//  5. passes tck.Run (every group) and keeps offline tests of its
//     statements (golden files), type mapping and error classification.
//
// A dialect may replace a Core method with a faster one of its own, as
// PostgreSQL does for its one-statement claim, completions and inserts
// (pgx, COPY, LISTEN/NOTIFY); the replacement must pass the same TCK
// cases.
package sqlcore
