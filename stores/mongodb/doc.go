// Package mongodb is the Ratchet store for MongoDB: an [spi.Store] on the
// official Go driver (go.mongodb.org/mongo-driver/v2), for any number of
// worker nodes sharing one database.
//
// It needs MongoDB 6.0 or later, as a replica set, a sharded cluster or a
// standalone server: it uses no transactions and no change streams, only
// single-document atomic operations (findOneAndUpdate, conditional
// updateOne, inserts and deletes), so a standalone server works as well as
// a replica set. Its tests run the conformance kit (package tck) against
// FerretDB 1.24 embedded in the test process (module
// stores/mongodb/ferrettest), and against a real MongoDB when one is
// available.
//
// It keeps workflows ([spi.WorkflowStore]; see "Workflows" below) and
// batches ([spi.BatchStore]; see "Batches" below), the places where a step
// is more than one document write, and jobs that wait for a signal
// ([spi.SignalStore]; see "Signals" below).
//
// # Opening
//
// [Open] connects to a mongodb:// or mongodb+srv:// URI with a client that
// the store owns, within a bounded time ([Options.ConnectTimeout], 10 s by
// default); [New] uses a client the application already has. Both work in
// one database ([Options.Database], else the URI's, else "ratchet") on the
// collections <prefix>jobs, <prefix>nodes, <prefix>leases,
// <prefix>permits, <prefix>workflows, <prefix>batches, <prefix>audit, <prefix>samples and <prefix>meta ([Options.CollectionPrefix], "ratchet_"
// by default), which they create with their indexes at start, idempotently,
// so nodes may start together: on the jobs, the claim index {status,
// task_name, priority, scheduled_time, _id} (replacing the task-less
// ratchet_claim of earlier versions, which Open drops), {status, _id} for
// listing by status,
// {status, owner_node} for recovery, a unique sparse index on
// idempotency_key (jobs without a key do not carry the field), and multikey
// indexes on tags and on the property entries, and sparse indexes on the
// workflow id, the staging mark and the unresolved signal waits (by key and
// name, and by deadline); on the audit log, {t, _id} for the deletion by
// age; on the archive, {finished_time, _id} for the purge. The meta
// document records the collection layout. With [Options.CheckOnly] they
// create nothing: a database that holds no store under the prefix fails
// with an error wrapping [spi.ErrSchema] (operator tools that only read
// open so). A database that records a newer collection layout
// ([SchemaVersion]) or holds conflicting indexes fails with an error
// wrapping [spi.ErrSchema].
//
// # Claim strategy
//
// Every state change is one single-document atomic operation whose filter
// holds its precondition, so correctness depends on no multi-document
// transaction.
//
// Effective priority (see [spi.EffectivePriority]) grows with waiting time
// only inside a priority level, so the best N jobs overall are among the
// best N of each of the five levels. [Store.ClaimJobs] reads the first N due
// PENDING jobs of each level in (scheduled_time, _id) order among the
// tasks the claim lists ([spi.ClaimParams].Tasks as a $in on task_name,
// which the server answers by merging one index range per task, so jobs
// of other tasks are never read; a claim of any task first reads the
// distinct tasks of the pending jobs), five finds in parallel on the claim
// index with the tag filter in the query ($all, $in, $nin on the tags
// array), merges them by effective priority descending,
// due time and id, and claims them one by one. A candidate without a
// resource is claimed as the head of its level: findOneAndUpdate({priority,
// status: PENDING, due, no resource, tag filter}, sort {scheduled_time,
// _id}) → RUNNING, owner, claimed time, claim_seq + 1. Alone, a claimer
// gets exactly the candidate it read; when another node took that one in
// between, it gets the next job of the level instead of a miss, so many
// claimers reading the same candidates do not spend their round trips
// racing for each of them (a lost race costs a round trip on MongoDB and a
// scan of the collection on FerretDB). A candidate naming a resource is
// claimed by id, findOneAndUpdate({_id, status: PENDING, claim_seq: seen}),
// after taking a permit; one that another node claimed in between matches
// nothing and is skipped. When candidates were skipped and a level had
// more, further rounds read on past them. The cost is O(N log backlog)
// whatever the backlog, aging is exact, and concurrent claimers never
// claim a job twice.
//
// Owner writes (CompleteJobs, ReleaseJobs, orphan recovery) are fenced the
// same way: one findOneAndUpdate or updateOne per job filtered by {_id,
// status: RUNNING, claim_seq}. MongoDB's update command reports how many
// statements of a batch matched but not which, so a batch is that many
// single-document operations, [Options.Parallelism] (16) in flight, each
// reporting exactly whether it applied. Inserts are one InsertMany
// (ordered: false) per batch; the unique index on idempotency_key decides
// duplicates (E11000), whose existing ids are then read in one query, and a
// key repeated inside a batch is written once.
//
// # Resource permits
//
// A job naming a Resource is claimed only while fewer than its
// ResourceLimit RUNNING jobs hold a permit of that resource. Each resource
// has a permit document in <prefix>permits: {_id: resource, n: holders, h:
// {hold: claim time}}, where each hold is named by the job id and the claim
// sequence of the claim that holds it. Before claiming such a job, the
// claim takes a permit with one conditional update, {_id: resource, n: {$lt:
// limit}}: $inc n, $set h.<hold> (an upsert when the document does not
// exist; on a full resource the upsert clashes on _id, which reads as "no
// permit"). A claim that then loses the job to another node gives the
// permit back; completion, retry, failure, release and recovery give it
// back when the job leaves RUNNING, with an update that matches only while
// the hold is there, so no hold is given back twice.
//
// Taking a permit and claiming the job (and ending a claim and giving the
// permit back) are two single-document writes. A process that dies between
// the two leaves a hold that no claim owns: the resource then has a permit
// less (never more) until it is repaired. [Store.RecoverOrphans] repairs
// it: it removes every hold whose job is not RUNNING with the hold's claim
// sequence, except a hold younger than the grace period whose job is still
// PENDING one sequence before (a claim in flight). The one window left: a
// claimer that stalls for longer than the grace period between its two
// writes can lose its hold and still claim the job, running its resource
// one job over the limit until that job ends; the same stall makes its node
// look dead to orphan recovery anyway.
//
// # Capabilities
//
// Besides [spi.Store], a [Store] implements [spi.ClaimChecker] (one query
// per batch), [spi.LeaseStore] (a lease is a document; the grant is a
// conditional update, else an insert whose unique _id lets exactly one
// racing owner win), [spi.JobStateStore], [spi.JobPropertyStore] and
// [spi.NodeTaskStore] (the tasks in the node's document). State
// and properties live inside the job document, so a fenced state write is
// one update whose filter holds the fence (RUNNING, claim_seq) and the
// version compare-and-set together, and a property write is one update
// whose filter requires the key to be absent: both are atomic with respect
// to claims, completions and recovery. It implements [spi.StatsReader]
// too ([Store.JobStats]: one aggregation and one find, both served by the
// claim index, always an exact count) and [spi.JobDeleter]
// ([Store.DeleteJobs]: the archive's candidates, each deleted by a delete
// guarded by its status, then its log lines), and [spi.AuditLog] (an entry
// is a document of the audit collection whose _id is its Seq, taken from a
// counter in the meta collection by one findOneAndUpdate with $inc, so a
// number is never given twice nor again after a delete; the listing reads
// _id backwards, the deletion by age the index ratchet_audit_time), and
// [spi.StatsSampleStore] (a minute's sample is a document of the samples
// collection whose _id is the minute in Unix seconds: the first insert of a
// minute wins, a second one fails with a duplicate key and is not kept;
// the reads and the deletion of the samples past the retention go along
// _id), and
// [spi.BulkManager] ([Store.RetryFailedJobs], [Store.CancelJobs]: one find
// of the batch, one updateMany guarded by the status for the jobs without
// dependents or an open wait, and the single-job writes, in the callers'
// order, for the others; no transaction spans the batch).
//
// It does not implement [spi.TxInserter] (it uses no transactions) nor
// [spi.WakeupListener]: new work is found by polling (change streams would
// need a replica set, and FerretDB has none).
//
// # Workflows
//
// A workflow job's document holds its workflow id (workflow_id, a sparse
// index), its dependencies in insert order (deps: parent, allowed states,
// condition and its arguments), the states its finished parents ended in
// (dps, keyed by the parent's id in hex) and the ids of its dependents
// (kids). Waiting is the number of dependencies without a recorded state.
// MongoDB has no multi-document atomic write here, so the design's
// "release in the same write as the parent's finish" becomes a sequence of
// single-document writes, each repeatable, with [Store.RepairWorkflows]
// (run by the engine's workflow repair service, every
// WorkflowRepairInterval) finishing whatever a crash cut short:
//
//   - Insert: a workflow's jobs are written staged (field stg, all
//     BLOCKED) with one ordered InsertMany, then committed by one insert
//     into <prefix>workflows keyed by the workflow id, then activated (the
//     roots become PENDING, the marks go). A staged insert is never
//     claimed; one left uncommitted for 10 minutes is deleted by the repair,
//     which first writes an abort mark under the same key so that a late
//     commit fails rather than races it; a committed one is activated by it.
//     So a workflow is written all or nothing, at the cost of a delay when
//     the submitter dies between its commit and its activation.
//   - Release: after the write that finishes a parent (a completion, a
//     crash-budget failure, CancelJob, CancelWorkflow), one write per child
//     records the parent's state if it is not recorded yet, and one more
//     moves a child whose parents are all recorded from BLOCKED to PENDING
//     (its filter requires them all). A crash in between leaves children
//     BLOCKED behind finished parents; the repair scans the BLOCKED jobs and
//     releases them (a parent found neither live nor archived counts as
//     CANCELLED). A child is never released before all its parents have
//     finished, and never twice.
//   - DLQ retry: the dependents that the failure cancelled or skipped wait
//     again first (deepest first), the retried job becomes PENDING last; a
//     crash in between leaves them BLOCKED behind a job still FAILED, which
//     the repair releases (after 30 s, so as not to race a retry in flight)
//     and the engine cancels again.
//   - Archiving keeps a finished job live while a dependent has not
//     finished, reading the candidates a page at a time so that such
//     parents hold nothing back.
//
// The repair reads every BLOCKED job on each pass (paged by id): its cost
// grows with the number of jobs waiting.
//
// # Signals
//
// A job inserted with a Signal is written WAITING (a workflow root that
// waits for a signal is activated to WAITING rather than PENDING) and is
// never claimed. The wait lives on the job document itself, in the
// sub-document sig: the name (n), key (k) and deadline (dl, µs) it was
// inserted with, and once resolved the outcome (o), the delivered payload
// (p, a binary, absent when none) and the resolution time (at, µs); GetJob,
// ListJobs, WorkflowJobs and ClaimJobs fill Job.Signal from it, and the
// archived copy of a job keeps it. A signal is all on one document, so
// every resolution is one atomic conditional write whose filter requires
// the job WAITING with its wait unresolved, and of a delivery, a timeout
// and a cancel racing exactly one applies:
//
//   - [Store.DeliverSignal] is one findOneAndUpdate on {_id, WAITING, the
//     name, unresolved} → PENDING due at now, DELIVERED with the payload;
//     when it matches nothing, a read of the job tells an unknown job
//     ([spi.ErrNotFound]) from one not WAITING or waiting for another name
//     ([spi.ErrInvalidState]).
//   - [Store.DeliverSignalByKey] reads the unresolved waits of the key and
//     name in id order, up to the limit, and resolves each with the same
//     conditional write; only the writes that applied count, and when one
//     lost a race the read is repeated for the rest.
//   - [Store.ExpireSignals] does the same for the unresolved waits whose
//     deadline is not after now, in (deadline, id) order, resolving them
//     TIMED_OUT.
//   - [Store.CancelJob] and [Store.CancelWorkflow] cancel a WAITING job and
//     resolve its wait CANCELLED in the same write.
//
// While a wait is unresolved its document also holds indexed copies of its
// key with its name (sig.wk) and of its deadline (sig.due), which the
// resolution removes: the sparse indexes ratchet_signal_key and
// ratchet_signal_due on them hold the unresolved waits only, so neither a
// delivery by key nor the sweeper reads resolved waits.
//
// # Batches
//
// A batch is one document of <prefix>batches; its children are jobs whose
// workflow_id is its id, and nothing on it changes when a child finishes.
// A chunk is staged (its children inserted BLOCKED with the staging mark
// and the chunk's token: never claimed, counted or waited for, though
// GetJob and ListJobs show them), committed by one conditional write of the
// batch ({persisted: offset, not sealed, open} → the new count, the seal,
// act: the token; a create inserts the document instead), then activated.
// A loser of the commit deletes what it staged; a writer that dies before
// it leaves jobs that are no children, deleted when the batch ends; one
// that dies after it leaves act, which the next chunk, FinishBatches,
// CancelBatch and CountBatch activate first. The end is one conditional
// write ({sealed, open} → outcome, callback_id, a "callback owed" mark);
// only the finisher whose write matched inserts the callback (its fixed id
// makes a repeat a duplicate), and FinishBatches inserts those a dead
// finisher owed: a batch ends once, and a cancel that wins leaves no
// callback. The archive keeps the children of an open batch live. The
// finisher probes each sealed open batch for an unfinished child on the
// workflow_id index, which may read many finished children of a large
// batch per pass. See batch.go.
//
// # Key rotation
//
// A [Store] implements [spi.ValueRewriter], which a key rotation uses to
// rewrite sealed values in place. A job's payload, result and states all
// live on its document (payload, job_result, st.<ns>.j), and an archived
// job's document in the archive collection is the same whole document, so
// [Store.JobValues] is one find on _id above the cursor, in _id order,
// projected to those fields, in the jobs collection (staged jobs, stg,
// included: a chunk a dead writer left staged must not stay under a
// retired key) or, for the archived pass, in the archive (its values
// marked Archived); then one find of the page's log lines in the logs
// collection ({job: {$in: ids}}, in (job, claim, line) order, empty
// messages left out), each job's lines after its other values. The live
// pass also projects the signal wait and the dependencies, and returns
// after a job's lines its delivered signal payload (sig.p, the wait's name
// sig.n as the namespace and its key sig.k) and the non-empty condition
// arguments of its dependencies (deps[i].ca, the parent's id deps[i].p as
// the namespace, in insert order); the archived pass reads neither, as an
// archived job has run and reads them no more.
// [Store.RewriteValues] writes each value with one UpdateOne whose filter
// requires the field to hold exactly the bytes read ({_id, field: old} →
// $set field: new, in the jobs collection or for an archived value the
// archive; a state keeps its version; for a log line {job, claim, line,
// msg: old} → $set msg: new in the logs collection; for a signal payload
// {_id, sig.n: name, sig.p: old} → $set sig.p: new; for a condition, a
// read of the job's dependencies finds the parent's index i, a dependency
// never moving, then {_id, deps.i.p: parent, deps.i.ca: old} → $set
// deps.i.ca: new), so a concurrent completion or state write always wins
// and the rewrite reports that it did not apply. A signal or condition
// rewrite marked Archived never applies. The rewrites of one job apply in
// their order, those of different jobs in parallel (see
// [Options.Parallelism]); an empty new value, an unknown column or a
// condition whose parent is no UUID fails the call before anything is
// written.
//
// # FerretDB
//
// The store also runs on FerretDB 1.24 (its tests do), with two
// accommodations that cost nothing on MongoDB: indexes are created one per
// command and only when missing (FerretDB 1.24 fails a createIndexes that
// repeats two or more existing indexes), and when the server refuses a
// projection in findAndModify (FerretDB answers NotImplemented), the store
// drops the projection from then on and reads whole documents. FerretDB
// 1.24 does not apply an update's filter atomically with its write, so it
// is not a safe production backend for several claimers; the tests put a
// serializing proxy in front of it (see module stores/mongodb/ferrettest).
//
// # Representation
//
// Job ids are BSON binaries of subtype 4 (UUID), whose order is the byte
// order of the UUIDs, so ListJobs pages by _id. Times are int64
// microseconds since the Unix epoch, not BSON dates: BSON dates have
// millisecond precision and the contract requires microseconds; returned
// times are UTC. Durations (the backoff parameter) are int64 microseconds.
// Payloads and results are binaries and round-trip byte for byte (nil and
// empty are kept apart). Optional fields (owner, claim and finish times,
// error, result, idempotency key, resource, params, tags) are absent when
// empty. Tags are an array (duplicates dropped); params a sub-document of
// strings, or, when a key cannot be a field name (a dot, as in
// spi.BatchParam, a leading dollar, a NUL, or empty: FerretDB refuses
// them), an array pl of the key/value entries that properties use. A
// document with fields of the wrong type, an unknown status or a priority
// out of range is reported by GetJob and ListJobs as an error
// wrapping [spi.ErrCorruptJob] naming the job, and moved to FAILED by a
// claim that meets it.
package mongodb
