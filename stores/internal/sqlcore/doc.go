// Package sqlcore holds the job state machine logic that every SQL store
// shares, written once: the ranking and permit admission of a claim with
// exact aging, the fencing and dedupe of owner writes, the recognition of a
// completion that an earlier call already applied (Recognize, over
// spi.Completion.AlreadyApplied: a batch sent again after its answer was
// lost counts as applied, not superseded), the tasks a claim reads
// (ClaimTasks, with the loose index scan PendingTasksSQL), the decoding and
// validation of a job row (corrupt rows named as such), and the retry loop
// of transactions with backoff. (The crash-budget decision of orphan
// recovery is spi.CrashOutcome, which the non-SQL stores apply too.)
//
// Some whole store methods live here too, as structs that a store embeds
// under an unexported alias and fills when it builds itself with its
// dialect's parts (statements, codecs, its transaction runner):
//
//   - JobReads: GetJob and ListJobs (SQLite, MySQL, SQL Server, Oracle);
//   - AdminWrites: RetryFailedJob and CancelJob (SQLite, SQL Server, Oracle);
//   - TxInserts: InsertJobs and InsertJobsTx (SQLite, SQL Server, Oracle);
//   - TxCompletions: CompleteJobs with the recognition of completions that
//     already applied (SQLite, SQL Server, Oracle);
//   - TxClaims: ClaimJobs as one transaction that adopts the jobs of a claim
//     whose COMMIT failed (SQL Server, Oracle);
//   - NodeMethods: spi.NodeTaskStore (all four database/sql stores);
//   - PropertyReads: GetProperty, GetPropertiesByPrefix and
//     FindJobsByProperty (the four database/sql stores);
//   - StateMethods: the spi.JobStateStore writes (every SQL store), and
//     StateRead: GetState (the four database/sql stores).
//
// A store supplies what differs between databases: the SQL text, the
// placeholders, the lock primitive, error classification and type codecs.
// The package is internal to the stores: users never import it.
//
// This is a step towards one SQL core: the stores still hold their
// statements, their claims (PostgreSQL's, MySQL's and SQLite's), their owner
// writes and their schema checks; a Dialect interface behind all of them is
// the part of the store-layer work still open.
package sqlcore
