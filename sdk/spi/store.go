package spi

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Store persists jobs. It is safe for concurrent use by many goroutines and,
// for durable stores, by many processes sharing one database.
//
// Owner writes (CompleteJobs, ReleaseJobs) are fenced: each names a
// [ClaimRef] and applies only while the job is RUNNING with that claim
// sequence; otherwise (a stale sequence, a job in another state, an unknown
// job) it changes nothing and the job is reported superseded, not as an
// error.
//
// Rules every store keeps (the tck module checks them): returned times are
// UTC; a retry leaves FinishedAt zero; a success keeps the attempt count;
// completions do not advance ClaimSeq; methods called after Close return an
// error wrapping ErrClosed (a second Close is harmless). A row that can no
// longer be decoded is reported by GetJob and ListJobs as an error wrapping
// ErrCorruptJob naming the job; ClaimJobs moves such a row to FAILED with the
// problem as its last error instead of returning it, so one bad row cannot
// block the queue.
type Store interface {
	// InsertJobs writes new PENDING jobs in one round trip where the
	// database allows. A job whose IdempotencyKey already exists is not
	// written; its result carries the existing id and Duplicate. The jobs
	// come fully formed from the client (id, times, defaults applied).
	// o says who inserts (the zero value: nobody in particular).
	InsertJobs(ctx context.Context, jobs []*Job, o InsertOptions) ([]InsertResult, error)

	// GetJob returns one job, or an error wrapping ErrNotFound.
	GetJob(ctx context.Context, id uuid.UUID) (*Job, error)

	// ListJobs returns jobs ordered by id, after the cursor, and the cursor
	// of the next page (the zero UUID when there is none).
	ListJobs(ctx context.Context, p ListParams) (jobs []*Job, next uuid.UUID, err error)

	// ClaimJobs atomically moves up to p.Limit due PENDING jobs
	// (ScheduledAt <= p.Now) to RUNNING, owned by p.NodeID, with ClaimSeq
	// advanced by one and ClaimedAt = p.Now, and returns them. It takes the
	// jobs in effective priority descending, then ScheduledAt ascending, then
	// id ascending (see [EffectivePriority]); no job is returned to two
	// callers. Only jobs passing p.Tags are claimed. A job naming a Resource
	// is claimed only while fewer than its ResourceLimit RUNNING jobs name
	// the same resource (counting the jobs this claim takes), across all
	// callers at once; jobs held back by a full resource are skipped, not
	// waited for.
	ClaimJobs(ctx context.Context, p ClaimParams) ([]*Job, error)

	// CompleteJobs applies a batch of fenced owner writes. The result has one
	// entry per completion: true when it applied, false when it was
	// superseded. A RETRY outcome leaves PENDING at RetryAt with the owner
	// cleared; SUCCEEDED and FAILED set FinishedAt and keep OwnerNode as the
	// record of the node that finished the job. Completions do not advance
	// ClaimSeq. A completion whose job already shows exactly what it
	// writes ([Completion.AlreadyApplied]: the write of an earlier call whose
	// commit succeeded but whose answer was lost) counts as applied, so a
	// caller may send a batch again after an error; within one batch only
	// the first completion of each claim can apply. A batch with an unknown
	// outcome fails before anything is written.
	CompleteJobs(ctx context.Context, cs []Completion) ([]bool, error)

	// ReleaseJobs puts claimed jobs back to PENDING, due at now, without
	// charging attempts or the crash budget (graceful stop). Fenced like
	// CompleteJobs; the claim sequence advances so the old owner is fenced
	// out.
	ReleaseJobs(ctx context.Context, refs []ClaimRef, now time.Time) ([]bool, error)

	// RetryFailedJob resets a FAILED job: status PENDING, last error cleared,
	// attempts and crash count zero, due at now. Wraps ErrNotFound or
	// ErrInvalidState.
	RetryFailedJob(ctx context.Context, id uuid.UUID, now time.Time) error

	// CancelJob moves a job that has not finished to CANCELLED, finished
	// at now: a PENDING, BLOCKED or WAITING one ([Cancelled]; the wait of a
	// WAITING one ends CANCELLED) or a RUNNING one ([Aborted]: its claim
	// ends, so the owner's completion is superseded, and its permit is
	// free). The dependents follow their cancel policy. A store that
	// publishes wakeups tells the nodes, after a RUNNING job's cancel
	// commits, to check their claims ([WakeupHint.CheckClaims]). Wraps
	// ErrNotFound, or ErrInvalidState for a finished job.
	CancelJob(ctx context.Context, id uuid.UUID, now time.Time) error

	// Heartbeat registers nodeID or refreshes its heartbeat to now.
	Heartbeat(ctx context.Context, nodeID string, now time.Time) error

	// DeregisterNode removes a node's row (graceful stop).
	DeregisterNode(ctx context.Context, nodeID string) error

	// RecoverOrphans handles RUNNING jobs whose owner has no node row, a
	// heartbeat older than p.Now − p.Grace, or is named in p.Nodes: each goes
	// back to PENDING (due at p.Now, crash count + 1) while its crash count
	// is below p.MaxCrashRedeliveries, else to FAILED with p.LastError and
	// FinishedAt = p.Now. Either way the claim sequence advances, the owner
	// is cleared, and the rows of the stale nodes (and of p.Nodes) are
	// deleted; so a node calls this before its first Heartbeat. Results are
	// ordered by job id.
	RecoverOrphans(ctx context.Context, p RecoverParams) ([]RecoveredJob, error)

	// Close releases the store's resources. Calling it twice is harmless.
	Close() error
}

// TxInserter is implemented by stores that can insert jobs inside a
// transaction the application owns, so that the jobs exist only if that
// transaction commits. tx is the database's own transaction type (pgx.Tx
// for PostgreSQL, *sql.Tx for the database/sql stores); a store given a type
// it cannot use returns an error naming the type it expected. Stores that
// publish wakeups do so only when the transaction commits.
type TxInserter interface {
	InsertJobsTx(ctx context.Context, tx any, jobs []*Job, o InsertOptions) ([]InsertResult, error)
}

// InsertOptions are what an insert says besides its jobs. The zero value is
// an insert from no node in particular.
type InsertOptions struct {
	// Source is the id of the node whose client inserts, or "". A store
	// that publishes wakeups ([WakeupListener]) names it in the wakeup of
	// this insert, so that the node, which has woken itself, can ignore
	// it. An insert in the application's transaction usually leaves it
	// empty: its wakeup comes with the commit, which the node has not seen.
	Source string
}

// WakeupListener is implemented by stores that carry new-work wakeups
// between processes (PostgreSQL LISTEN/NOTIFY). Such a store publishes a
// wakeup from InsertJobs and InsertJobsTx when the write commits.
type WakeupListener interface {
	// ListenWakeups calls fn for every wakeup, from any process, until ctx
	// ends; it reconnects with backoff when its connection drops (the
	// engine keeps polling meanwhile) and returns ctx's error. fn must be
	// fast and must not block. A wakeup's Source is the
	// [InsertOptions.Source] of the insert that published it ("" for a
	// wakeup published by anything else: a release, a recovery, a retry).
	ListenWakeups(ctx context.Context, fn func(WakeupHint)) error
}

// ClaimChecker is implemented by stores that can tell whether claims are
// still current, so a node can stop the bodies of jobs that were recovered
// from under it (for example after it stalled past the grace period).
type ClaimChecker interface {
	// CheckClaims reports, for each ref, whether the job is still RUNNING
	// with that claim sequence.
	CheckClaims(ctx context.Context, refs []ClaimRef) ([]bool, error)
}

// ClaimAdopter is implemented by stores that can find the jobs of a claim
// whose answer was lost. A ClaimJobs call that failed may have been
// applied all the same (the connection broke after the database committed
// the claim, before its rows came back): its jobs are RUNNING under the
// node that asked, which does not know them, and, the node being alive,
// no orphan scan would ever recover them. The node adopts them instead:
// after a claim failed, it asks for the jobs RUNNING under it claimed at
// that claim's Now (a node's claims never share a Now), and runs them
// under the claim sequence the lost claim gave them.
type ClaimAdopter interface {
	// AdoptClaims returns the jobs RUNNING under node whose claim time is
	// one of claimedAt, as ClaimJobs returns jobs; none when no such claim
	// was applied.
	AdoptClaims(ctx context.Context, node string, claimedAt []time.Time) ([]*Job, error)
}

// ConcurrentClaimer is implemented by stores that serve several claims at
// once to good effect: claims on connections of their own that skip each
// other's rows (PostgreSQL's SKIP LOCKED). A node then keeps two claims in
// flight by default (engine.Options.ClaimConcurrency), so that the
// database works on one while the node decodes and dispatches the other.
// A store whose claims take turns (SQLite's one writer, a store behind
// one lock) does not implement it: a second claim would only wait.
type ConcurrentClaimer interface {
	// ConcurrentClaims reports whether concurrent claims pay off.
	ConcurrentClaims() bool
}

// NodeTaskStore is implemented by stores that record, with a node's
// heartbeat, the tasks it runs, and count the pending jobs per task: with
// both, a client finds the jobs that no live node can run (in a mixed
// fleet, the tasks whose nodes are gone or not deployed yet).
type NodeTaskStore interface {
	// HeartbeatTasks is Heartbeat that also records tasks as the tasks
	// nodeID runs, replacing what it recorded before. A node registered by
	// a plain Heartbeat has recorded none.
	HeartbeatTasks(ctx context.Context, nodeID string, tasks []string, now time.Time) error
	// LiveNodes returns the nodes whose heartbeat is at or after since,
	// ordered by id, each with the tasks it recorded (sorted, without
	// repeats; nil when it recorded none, as a node of a version before
	// this capability does).
	LiveNodes(ctx context.Context, since time.Time) ([]NodeInfo, error)
	// PendingTasks returns, for each task that has PENDING jobs, their
	// number and the earliest scheduled time among them, ordered by task.
	PendingTasks(ctx context.Context) ([]TaskBacklog, error)
}

// NodeInfo is one node as [NodeTaskStore.LiveNodes] reports it.
type NodeInfo struct {
	ID        string
	Heartbeat time.Time
	// Tasks are the tasks the node recorded with its heartbeat; nil when
	// it recorded none (it may run any task).
	Tasks []string
	// Report is the report the node recorded with its heartbeat
	// (NodeReportStore); nil when it recorded none (a node of a version
	// before reports, a store without NodeReportStore) or when the stored
	// report cannot be read: a report only informs, and never hides the
	// node.
	Report *NodeReport
}

// TaskBacklog is the PENDING jobs of one task.
type TaskBacklog struct {
	Task    string
	Pending int64
	// Earliest is the earliest scheduled time among them.
	Earliest time.Time
}

// LeaseStore is implemented by stores that grant named, time-limited leases:
// the StartupCoordinator of the spec, used for destructive start-up work and
// cluster-singleton work (one node at a time).
type LeaseStore interface {
	// TryAcquireLease gives the lease name to owner until now+ttl when it is
	// free, expired, or already owner's (a renewal), and reports whether
	// owner holds it afterwards.
	TryAcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error)
	// ReleaseLease frees the lease if owner holds it; otherwise it does
	// nothing.
	ReleaseLease(ctx context.Context, name, owner string) error
}

// StateWriteResult is the outcome of a JobStateStore write.
type StateWriteResult int

// The outcomes of state writes.
const (
	// StateUpdated: the write applied.
	StateUpdated StateWriteResult = iota + 1
	// StateVersionConflict: the expected version did not match (or, for
	// an init, the state exists already): re-read and retry.
	StateVersionConflict
	// StateSuperseded: the fenced writer no longer owns the job: stop.
	StateSuperseded
)

// String names the result as the spec does.
func (r StateWriteResult) String() string {
	switch r {
	case StateUpdated:
		return "UPDATED"
	case StateVersionConflict:
		return "VERSION_CONFLICT"
	case StateSuperseded:
		return "SUPERSEDED"
	}
	return "StateWriteResult(?)"
}

// VersionedState is one namespace of a job's state.
type VersionedState struct {
	JSON    []byte
	Version int64
}

// JobStateStore is implemented by stores that keep per-job, per-namespace
// mutable JSON state with version compare-and-set. The fenced methods apply
// only while the job is RUNNING with claimSeq (else StateSuperseded); the
// Unfenced ones are for writers that own no claim. Init creates version 0;
// Update increments the version. A job that does not exist wraps
// ErrNotFound.
type JobStateStore interface {
	GetState(ctx context.Context, jobID uuid.UUID, namespace string) (VersionedState, bool, error)
	InitState(ctx context.Context, jobID uuid.UUID, namespace string, state []byte, claimSeq int64) (StateWriteResult, error)
	UpdateState(ctx context.Context, jobID uuid.UUID, namespace string, state []byte, expectedVersion, claimSeq int64) (StateWriteResult, error)
	InitStateUnfenced(ctx context.Context, jobID uuid.UUID, namespace string, state []byte) (StateWriteResult, error)
	UpdateStateUnfenced(ctx context.Context, jobID uuid.UUID, namespace string, state []byte, expectedVersion int64) (StateWriteResult, error)
}

// JobCounter is implemented by stores that count the jobs a listing would
// return, without reading more than the cap: a dashboard shows "10,000+"
// instead of scanning a table of millions.
type JobCounter interface {
	// CountJobs returns how many jobs with an id above p.After pass p's
	// filters, counting at most limit (limit > 0; p.Limit is ignored).
	CountJobs(ctx context.Context, p ListParams, limit int) (int, error)
}

// JobPropertyStore is implemented by stores that keep indexed, write-once
// plaintext properties per job. Writing a key again with the same value is
// harmless; with another value it fails wrapping ErrPropertyExists. A job
// that does not exist wraps ErrNotFound.
type JobPropertyStore interface {
	PutProperty(ctx context.Context, jobID uuid.UUID, key, value string) error
	GetProperty(ctx context.Context, jobID uuid.UUID, key string) (string, bool, error)
	// GetPropertiesByPrefix returns the job's properties whose key starts
	// with prefix ("" for all).
	GetPropertiesByPrefix(ctx context.Context, jobID uuid.UUID, prefix string) (map[string]string, error)
	// FindJobsByProperty returns up to limit ids (ascending) of jobs whose
	// property key equals value.
	FindJobsByProperty(ctx context.Context, key, value string, limit int) ([]uuid.UUID, error)
}

// WakeupHint tells a node that new work exists somewhere in the cluster;
// or, with CheckClaims, that claims of RUNNING jobs were taken away; or,
// with Watching or Finished, carries a notice of Client.WaitJob's.
type WakeupHint struct {
	Priority Priority
	// Source is the node id of the publisher, so that a node can ignore its
	// own wakeups; empty when unknown.
	Source string
	// CheckClaims says that RUNNING jobs were cancelled (CancelJob,
	// CancelJobs, CancelWorkflow): a node checks its running claims at
	// once ([ClaimChecker]) and cancels the bodies of the jobs it no
	// longer owns, instead of waiting for its next heartbeat. It carries
	// no priority, and no node ignores it as its own.
	CheckClaims bool
	// Watching names jobs whose end a process waits for (Client.WaitJob),
	// Finished jobs that a node finished while another process watched
	// them: the notices of a FinishPublisher. A hint carries one of the
	// two, or neither, and then no priority.
	Watching, Finished []uuid.UUID
}

// FinishPublisher is implemented by a ClusterCoordinator that also carries
// the notices that let Client.WaitJob return as soon as another process
// finishes the job: a waiting process announces the jobs it watches
// (NotifyWatching, again while it waits: a node forgets a watch after
// WatchTTL), and a node that finishes a watched job publishes its end
// (NotifyFinished). Both are best effort: a lost notice leaves the waiter
// to its polling. A publisher sends at most MaxNoticeIDs ids in one
// message, splitting longer lists.
type FinishPublisher interface {
	NotifyWatching(ctx context.Context, ids []uuid.UUID, source string)
	NotifyFinished(ctx context.Context, ids []uuid.UUID, source string)
}

// WatchTTL is how long a node keeps a watch that a process announced
// (WakeupHint.Watching); a waiting process announces its watches again
// every third of it.
const WatchTTL = 30 * time.Second

// MaxNoticeIDs is the most job ids one watching or finished notice
// carries: 150 ids in EncodeJobIDs's form take 5,549 bytes, which leaves
// room for the source in a PostgreSQL notification's 8,000.
const MaxNoticeIDs = 150

// EncodeJobIDs renders ids as a notice's payload carries them: their
// canonical text, joined by commas.
func EncodeJobIDs(ids []uuid.UUID) string {
	b := make([]byte, 0, 37*len(ids))
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, id.String()...)
	}
	return string(b)
}

// DecodeJobIDs parses EncodeJobIDs's form; it fails on anything else.
func DecodeJobIDs(s string) ([]uuid.UUID, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxNoticeIDs {
		return nil, fmt.Errorf("a notice of %d job ids, over the limit of %d", len(parts), MaxNoticeIDs)
	}
	ids := make([]uuid.UUID, len(parts))
	for i, p := range parts {
		id, err := uuid.Parse(p)
		if err != nil || len(p) != 36 {
			return nil, fmt.Errorf("a notice's job id %.40q is not a canonical UUID", p)
		}
		ids[i] = id
	}
	return ids, nil
}

// NoticeChunks splits ids into the lists of at most MaxNoticeIDs that a
// publisher sends one notice each.
func NoticeChunks(ids []uuid.UUID) [][]uuid.UUID {
	var out [][]uuid.UUID
	for len(ids) > MaxNoticeIDs {
		out = append(out, ids[:MaxNoticeIDs:MaxNoticeIDs])
		ids = ids[MaxNoticeIDs:]
	}
	if len(ids) > 0 {
		out = append(out, ids)
	}
	return out
}

// ClaimsPublisher is implemented by a ClusterCoordinator that also carries
// the notice that a cancel took claims of RUNNING jobs away
// (WakeupHint.CheckClaims), so that the node running such a job cancels
// its body at once rather than at its next heartbeat.
type ClaimsPublisher interface {
	NotifyClaimsChanged(ctx context.Context, source string)
}

// ClusterCoordinator carries best-effort new-work wakeups between nodes, so
// that a submission on one node wakes idle pollers on the others at once.
// Polling remains the fallback, so a lost wakeup only delays work.
type ClusterCoordinator interface {
	// NotifyNewWork publishes a wakeup from source.
	NotifyNewWork(ctx context.Context, p Priority, source string)
	// RegisterWakeupListener adds a listener called for every wakeup,
	// including the node's own (listeners filter by Source). Listeners must
	// be fast, non-blocking and safe for concurrent use.
	RegisterWakeupListener(fn func(WakeupHint))
	// Close releases the transport; calling it twice is harmless.
	Close() error
}

// TaskPauser is implemented by stores that pause tasks fleet-wide and
// durably. No claim statement that starts after PauseTask returns takes a
// job of a paused task: the claim reads the paused tasks in the statement
// that picks its candidates, by the database's own order of commits, so a
// node's clock plays no part. Submissions of a paused task are still
// written; its jobs wait PENDING, and its RUNNING jobs run on, until
// ResumeTask. The pause survives restarts of every node: it is a row of
// the store's.
type TaskPauser interface {
	// PauseTask pauses task from now on and reports whether it was
	// running (false: it was paused already, since the time first
	// recorded, which stays).
	PauseTask(ctx context.Context, task string, now time.Time) (bool, error)
	// ResumeTask resumes task and reports whether it was paused.
	ResumeTask(ctx context.Context, task string) (bool, error)
	// PausedTasks returns the paused tasks, ordered by name.
	PausedTasks(ctx context.Context) ([]PausedTask, error)
}

// PausedTask is one task that [TaskPauser.PauseTask] paused.
type PausedTask struct {
	Task string
	// Since is when it was paused.
	Since time.Time
}
