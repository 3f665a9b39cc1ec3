package sqlcore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Database is the contract of a SQL database with Core: what every
// dialect must write, as the methods of one type that Compile takes. A type
// that lacks one of them does not compile there, and the compiler names the
// method. T is the Go type a job id is scanned into. Everything else a
// dialect may say (faster or database-specific statements, facts about the
// database) is a field of [Dialect], each with a portable default.
type Database[T any] interface {
	// Name names the store in errors: "the SQLite store".
	Name() string
	// Syntax is how the database writes the portable statements. Its
	// Mark and JobColumns must be set; its other fields have defaults.
	Syntax() Syntax
	// InsertSizes bounds the multi-row inserts: at most rows jobs in one
	// statement, at most tags tags in one (and two thirds of that of
	// properties, three arguments each, not two).
	InsertSizes() (rows, tags int)
	// ParseID converts a scanned job id, failing with a Corrupt error that
	// names a malformed one; IDText names a stored id in messages, also a
	// malformed one.
	ParseID(raw T) (uuid.UUID, error)
	IDText(raw T) string
	// Tags reads the tags column of JobColumns (not NULL, not empty).
	Tags(col string) ([]string, error)
	// Holders locks the permits of resources (sorted) until the
	// transaction ends and counts each one's RUNNING holders: the
	// database's lock primitive (pg_advisory_xact_lock, row locks on
	// scheduler_resource, sp_getapplock, SQLite's single writer).
	Holders(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error)
	// PropertiesByPrefixSQL reads the job's (key, value) rows whose key
	// starts with prefix, byte for byte (no character of it a wildcard,
	// case kept), LEFT JOINed to the job (a row even without properties).
	PropertiesByPrefixSQL(jobID uuid.UUID, prefix string) (string, []any)
}

// database is Database under a name that embeds unexported.
type database[T any] = Database[T]

// Dialect is a SQL database's part of Core's methods, made by Compile: the
// required methods of its [Database], and the optional fields below, the
// dialect's own statements (each a function returning SQL text and its
// arguments, bound as the database wants them) and facts. Compile writes
// every statement field a dialect leaves nil in the database's syntax;
// the fields that stay nil after Compile are documented as optional, and
// Core checks them before a call.
type Dialect[T any] struct {
	// Syntax is how the dialect writes the portable statements (its
	// Database's, set by Compile).
	Syntax Syntax
	// database is the Database it was compiled from: its methods are the
	// dialect's.
	database[T]

	// The claim (see Claim). PendingTasksSQL reads the distinct tasks of the PENDING jobs (see
	// PendingTasksSQL), for a claim that lists no task; TasksPerClaim
	// bounds the tasks of one CandidatesSQL (0: no bound).
	PendingTasksSQL string
	TasksPerClaim   int
	// CandidatesSQL reads, for each of tasks and each priority level, the
	// first limit due (at now) PENDING jobs in (scheduled_time, job_id)
	// order that pass tags and whose resource has a free permit, locking
	// them where the database skips locked rows: (job_id, priority,
	// scheduled_time, resource_name, resource_limit).
	CandidatesSQL func(tasks []string, tags spi.TagFilter, now time.Time, limit int) (string, []any)
	// Pick, when not nil, chooses the jobs to claim from cands (best
	// first) instead of Admit, locking them (Oracle's rounds).
	Pick func(ctx context.Context, tx *sql.Tx, cands []Candidate, limit int, held map[string]int64) ([]uuid.UUID, error)
	// ClaimSQL moves the PENDING jobs of ids to RUNNING for node at now,
	// the claim sequence advanced; with ClaimReturns it returns their rows
	// (RETURNING), else JobsSQL reads them back.
	ClaimSQL     func(node string, now time.Time, ids []uuid.UUID) (string, []any)
	ClaimReturns bool
	// Take, when not nil, replaces ClaimSQL and JobsSQL: it claims ids
	// and reads back the claimed rows (SQL Server's two result sets).
	Take func(ctx context.Context, tx *sql.Tx, node string, now time.Time, ids []uuid.UUID) ([]*spi.Job, []BadRow[T], error)
	// FailCorruptSQL fails the row id into the dead-letter queue with
	// msg, finished at now: a claimed row of claim sequence seq that
	// could not be read back, or (seq < 0) a candidate whose id cannot be
	// read.
	FailCorruptSQL func(now time.Time, msg string, id T, seq int64) (string, []any)
	// Chosen, when not nil, runs once the jobs to claim are chosen and
	// locked, before they move (a test's fault injection point).
	Chosen func(tx *sql.Tx) error
	// AdoptSQL reads the rows of the jobs of ids that are RUNNING,
	// claimed at now: the jobs of a claim whose COMMIT did apply.
	AdoptSQL func(now time.Time, ids []uuid.UUID) (string, []any)
	// AdoptClaimsSQL reads the rows of the jobs RUNNING under node whose
	// claim time is one of times (Core.AdoptClaims).
	AdoptClaimsSQL func(node string, times []time.Time) (string, []any)

	// JobsSQL reads the rows (the columns of JobColumns) of the jobs of
	// ids, at most MaxIDs of them; GetJobSQL the row of job id;
	// ListJobsSQL up to limit rows with an id above p.After that pass p's
	// filters (status, task, creation time, property), in id order.
	JobsSQL     func(ids []uuid.UUID) (string, []any)
	GetJobSQL   func(id uuid.UUID) (string, []any)
	ListJobsSQL func(p spi.ListParams, limit int) (string, []any)
	// CountJobsSQL counts, up to limit, the rows ListJobsSQL would list.
	CountJobsSQL func(p spi.ListParams, limit int) (string, []any)

	// The insert (see Insert). ExistingKeysSQL reads (idempotency_key,
	// job_id) of the jobs holding keys (at most MaxIDs); InsertJobsSQL
	// inserts jobs as PENDING, InsertTagsSQL the tags of jobs,
	// InsertPropsSQL their properties (as many as the Database's
	// InsertSizes allow); AfterInsert, when not nil, runs
	// once the rows are written (Oracle's empty BLOBs). ValidateJobs
	// checks a batch first (nil: spi.ValidateJobs); InsertRetryable, when
	// not nil, is the Retryable of the insert transactions.
	// RowBytes, when not nil, estimates the SQL text of one job's row and
	// InsertBudget the most one statement may hold: a statement then takes
	// fewer than the InsertSizes' rows when they would not fit (MySQL's
	// max_allowed_packet).
	RowBytes        func(j *spi.Job) int
	InsertBudget    func() int
	ExistingKeysSQL func(keys []string) (string, []any)
	InsertJobsSQL   func(jobs []*spi.Job) (string, []any, error)
	InsertTagsSQL   func(tags []JobTag) (string, []any)
	InsertPropsSQL  func(props []JobProp) (string, []any)
	AfterInsert     func(ctx context.Context, q DBTX, jobs []*spi.Job) error
	ValidateJobs    func(jobs []*spi.Job) error
	InsertRetryable func(error) bool

	// WriteCompletions applies in tx the completions of cs at positions
	// pos (the first of each claim, see FirstOfEach), each only while its
	// job is RUNNING with the named claim sequence, and sets out[i] for
	// those that applied.
	WriteCompletions func(ctx context.Context, tx *sql.Tx, cs []spi.Completion, pos []int, out []bool) error

	// RetryFailedSQL moves job id from FAILED to PENDING due at now
	// (error cleared, attempts and crash count zero, finish time and
	// owner cleared); CancelSQL from PENDING, BLOCKED or WAITING to
	// CANCELLED, finished at now (spi.Cancelled); AbortSQL from RUNNING to
	// CANCELLED, its claim ended (spi.Aborted); StatusSQL reads its
	// status.
	RetryFailedSQL, CancelSQL, AbortSQL func(id uuid.UUID, now time.Time) (string, []any)
	StatusSQL                           func(id uuid.UUID) (string, []any)

	// GetStateSQL reads the namespace's (state_json, version) LEFT JOINed
	// to the job: no row means no job, a NULL version no state.
	// WriteState, when not nil, replaces Core's state write (PostgreSQL's
	// one statement).
	// CheckState, when not nil, refuses a write the database cannot keep
	// (Oracle's empty namespace) before anything runs.
	GetStateSQL func(jobID uuid.UUID, ns string) (string, []any)
	WriteState  func(ctx context.Context, w StateWrite) (spi.StateWriteResult, error)
	CheckState  func(w StateWrite) error

	// FindByPropertySQL reads the ids of the jobs whose property key
	// equals value, in ascending order, at most limit (all when limit <=
	// 0).
	FindByPropertySQL func(key, value string, limit int) (string, []any)

	// HeartbeatTasksSQL is HeartbeatSQL that records the node's tasks
	// (their EncodeTasks form) too; LiveNodesSQL reads (node_id,
	// heartbeat_ts, task_names, node_report) of the nodes with a heartbeat at or after
	// since; PendingCountSQL is the dialect's PendingTasksCountSQL.
	HeartbeatTasksSQL func(nodeID, tasks string, now time.Time) (string, []any)
	LiveNodesSQL      func(since time.Time) (string, []any)
	PendingCountSQL   string
	// HeartbeatReportSQL is HeartbeatTasksSQL that records the node's
	// report (its spi.EncodeNodeReport form, in node_report) too; LiveNodesSQL
	// reads node_report after task_names.
	HeartbeatReportSQL func(nodeID, tasks, report string, now time.Time) (string, []any)

	// The gauges (see JobStats). JobCountsSQL returns the read of
	// (status, task_name, priority, count, estimated) per status, task
	// and priority of the live jobs: a GROUP BY (estimated 0), or, for a
	// dialect that looks at the table's size first (it may query db), an
	// estimate of a large table (estimated 1). OldestDueSQL reads the
	// earliest scheduled time of the PENDING jobs due at now (NULL for
	// none).
	JobCountsSQL func(ctx context.Context, db Querier) (string, error)
	OldestDueSQL func(now time.Time) (string, []any)

	// TimeOf converts a scanned time column that is not NULL; nil takes
	// a time.Time, in UTC.
	TimeOf func(v any) (time.Time, error)
	// MaxIDs is the most ids (or node names) one statement may name; 0
	// means no limit.
	MaxIDs int
	// IsDuplicate reports a duplicate-key error; nil means the dialect
	// never returns one where Core looks for it.
	IsDuplicate func(error) bool
	// Wake, when not nil, tells pollers that jobs of priority prio (the
	// most urgent of a write) became PENDING: PostgreSQL's NOTIFY. Its
	// ReleaseSQL, RetryFailedSQL and CancelSQL then return the priority of
	// each job they changed.
	Wake func(ctx context.Context, prio int)
	// ClaimsChanged, when not nil, tells the nodes that claims of RUNNING
	// jobs were taken away by a cancel that committed, so that they check
	// their running claims at once (spi.WakeupHint.CheckClaims):
	// PostgreSQL's NOTIFY.
	ClaimsChanged func(ctx context.Context)

	// HeartbeatSQL registers nodeID or refreshes its heartbeat to now (an
	// upsert that leaves its tasks alone; nil: an update, and an insert
	// when the row is missing); DeregisterSQL deletes its row.
	HeartbeatSQL  func(nodeID string, now time.Time) (string, []any)
	DeregisterSQL func(nodeID string) (string, []any)

	// RunningSQL reads (job_id, claim_seq) of the RUNNING jobs among ids;
	// with lock, in id order, locking them until the transaction ends.
	RunningSQL func(ids []uuid.UUID, lock bool) (string, []any)
	// ReleaseSQL puts the RUNNING jobs of ids back to PENDING due at now,
	// the owner cleared and the claim sequence advanced.
	ReleaseSQL func(now time.Time, ids []uuid.UUID) (string, []any)

	// AcquireLeaseSQL gives the lease name to owner until until when it
	// is free, expired at now, or already owner's (nil: an update, and an
	// insert when it changed nothing); LeaseOwnerSQL then
	// reads its owner; ReleaseLeaseSQL deletes it if owner holds it.
	AcquireLeaseSQL func(name, owner string, until, now time.Time) (string, []any)
	LeaseOwnerSQL   func(name string) (string, []any)
	ReleaseLeaseSQL func(name, owner string) (string, []any)

	// PutPropertySQL inserts the property when the job exists and the key
	// is free: it changes no row (or fails with a duplicate key)
	// otherwise. GetPropertySQL reads (prop_key, prop_value) LEFT JOINed
	// to the job: no row means no job.
	PutPropertySQL func(jobID uuid.UUID, key, value string) (string, []any)
	GetPropertySQL func(jobID uuid.UUID, key string) (string, []any)

	// JobFenceSQL reads (status, claim_seq) of the job, locking the row
	// against claims, completions and recovery until the transaction
	// ends. InitStateSQL inserts version 0 of a namespace's state (no row
	// changed, or a duplicate key, when it exists); UpdateStateSQL sets
	// the state and increments the version when it is expected.
	JobFenceSQL    func(jobID uuid.UUID) (string, []any)
	InitStateSQL   func(jobID uuid.UUID, ns string, state []byte) (string, []any)
	UpdateStateSQL func(jobID uuid.UUID, ns string, state []byte, expected int64) (string, []any)

	// OrphansSQL reads (job_id, task_name, owner_node, crash_count,
	// priority) of the RUNNING jobs whose owner is one of nodes or has no
	// node row with a heartbeat at or after cutoff, in id order, locking
	// them. RequeueSQL puts jobs back to PENDING due at now with their
	// crash count plus one; BurySQL fails them into the dead-letter queue
	// with lastError ("" for NULL), finished at now. Both advance the
	// claim sequence and clear the owner. DeleteNodesSQL deletes the node
	// rows with a heartbeat before cutoff and those of nodes.
	OrphansSQL func(cutoff time.Time, nodes []string) (string, []any)
	// LockOrphansSQL, when not nil, makes OrphansSQL a plain read of the
	// candidates (no locks, so no gap locks in an index of RUNNING jobs):
	// it reads the rows of OrphansSQL again for ids, by primary key, still
	// orphans, locking them in id order.
	LockOrphansSQL func(cutoff time.Time, nodes []string, ids []T) (string, []any)
	RequeueSQL     func(now time.Time, ids []T) (string, []any)
	BurySQL        func(now time.Time, lastError string, ids []T) (string, []any)
	DeleteNodesSQL func(cutoff time.Time, nodes []string) (string, []any)
}

// Config is what a store gives New: its gate, its pool, its error
// wrapper, its retry of transient errors and its dialect.
type Config[T any] struct {
	Gate *Gate
	DB   *sql.DB
	// Fail wraps an error with the operation's name, as the store does.
	Fail func(op string, err error) error
	// Retry runs a transaction again after a transient error (its
	// Retryable: the dialect's classification); the zero value runs it
	// once.
	Retry Retry
	// BeforeCommit, when not nil, runs at the end of every transaction,
	// before its COMMIT (a test's fault injection point); an error it
	// returns fails that run.
	BeforeCommit func(tx *sql.Tx) error
	D            Dialect[T]
	// SchemaNote is what the store's open found worth a warning about its
	// schema (Schema.Note), "" for nothing.
	SchemaNote string
}

// Core implements the methods of spi.Store and its capabilities that do not
// depend on the database, once, over a Dialect. A store embeds it (under a
// local alias) and builds it with New; its fields are unexported, so none
// of them shows through the store's API. The zero value is not usable.
type Core[T any] struct{ cfg Config[T] }

// New returns the core of a store. Its dialect must come from Compile.
func New[T any](cfg Config[T]) Core[T] {
	if cfg.D.database == nil {
		panic("sqlcore: New with a Dialect that Compile did not make")
	}
	return Core[T]{cfg}
}

// SchemaWarning says that the store opened a schema newer than its code
// whose later migrations are all marked compatible (naming both versions),
// or "" for a schema at the code's own version. It implements
// [spi.SchemaWarner].
func (c Core[T]) SchemaWarning() string { return c.cfg.SchemaNote }

// WithSchemaNote returns the core with its SchemaNote set to note.
func (c Core[T]) WithSchemaNote(note string) Core[T] {
	c.cfg.SchemaNote = note
	return c
}

// do runs fn as the operation op: inside the gate, with its error wrapped.
func (c Core[T]) do(op string, fn func() error) error {
	done, err := c.cfg.Gate.Enter()
	if err != nil {
		return err
	}
	defer done()
	if err := fn(); err != nil {
		return c.cfg.Fail(op, err)
	}
	return nil
}

// inTx runs fn in one transaction with Retry (retryable, when not nil, in
// place of its Retryable).
func (c Core[T]) inTx(ctx context.Context, retryable func(error) bool, fn func(tx *sql.Tx) error) error {
	return c.inTxAt(ctx, retryable, func(tx *sql.Tx, _ Attempt) error { return fn(tx) })
}

// inTxAt is inTx telling fn whether an earlier run's COMMIT failed (see
// Attempt).
func (c Core[T]) inTxAt(ctx context.Context, retryable func(error) bool, fn func(tx *sql.Tx, at Attempt) error) error {
	r := c.cfg.Retry
	if retryable != nil {
		r.Retryable = retryable
	}
	return InTx(ctx, c.cfg.DB, r, func(tx *sql.Tx, at Attempt) error {
		if err := fn(tx, at); err != nil || c.cfg.BeforeCommit == nil {
			return err
		}
		return c.cfg.BeforeCommit(tx)
	})
}

// upsert runs fn in one transaction (so with the store's retries), once
// more when it raced with another writer creating the same row and hit a
// duplicate key: the other writer won, and the run again sees its row.
func (c Core[T]) upsert(ctx context.Context, fn func(tx *sql.Tx) error) error {
	err := c.inTx(ctx, nil, fn)
	if err != nil && c.cfg.D.IsDuplicate != nil && c.cfg.D.IsDuplicate(err) {
		err = c.inTx(ctx, nil, fn)
	}
	return err
}

// exec runs one statement with upsert.
func (c Core[T]) exec(ctx context.Context, stmt func() (string, []any)) error {
	return c.upsert(ctx, func(tx *sql.Tx) error {
		q, args := stmt()
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	})
}

// write runs a write that makes jobs PENDING and returns how many rows it
// changed and the most urgent priority among them: with the dialect's
// Wake, the statement returns the priority of each row it changed (-1 when
// none did, or without Wake).
func (c Core[T]) write(ctx context.Context, tx *sql.Tx, q string, args []any) (n int64, top int, err error) {
	if c.cfg.D.Wake == nil {
		r, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, -1, err
		}
		n, err = r.RowsAffected()
		return n, -1, err
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, -1, err
	}
	defer rows.Close()
	prios, err := ReadColumn[int](rows)
	top = -1
	for _, p := range prios {
		top = max(top, p)
	}
	return int64(len(prios)), top, err
}

// Heartbeat registers nodeID or refreshes its heartbeat to now. It
// implements [spi.Store].
func (c Core[T]) Heartbeat(ctx context.Context, nodeID string, now time.Time) error {
	return c.do("heartbeat "+nodeID, func() error { return c.heartbeat(ctx, nodeID, nil, nil, now) })
}

// heartbeat upserts the node's row, with its tasks (their EncodeTasks
// form) unless tasks is nil and its report (spi.EncodeNodeReport) unless
// report is nil (a report goes with tasks): with the dialect's
// HeartbeatSQL, HeartbeatTasksSQL or HeartbeatReportSQL, else (a database
// without an upsert) as an update and, when the row is missing, an
// insert; a duplicate key of the insert (the row created meanwhile) makes
// upsert run both again.
func (c Core[T]) heartbeat(ctx context.Context, node string, tasks, report *string, now time.Time) error {
	d, s := &c.cfg.D, &c.cfg.D.Syntax
	switch {
	case tasks == nil && d.HeartbeatSQL != nil:
		return c.exec(ctx, func() (string, []any) { return d.HeartbeatSQL(node, now) })
	case tasks != nil && report == nil && d.HeartbeatTasksSQL != nil:
		return c.exec(ctx, func() (string, []any) { return d.HeartbeatTasksSQL(node, *tasks, now) })
	case tasks != nil && report != nil && d.HeartbeatReportSQL != nil:
		return c.exec(ctx, func() (string, []any) { return d.HeartbeatReportSQL(node, *tasks, *report, now) })
	}
	set, cols, args := "heartbeat_ts = ?", "heartbeat_ts", []any{s.time(now)}
	if tasks != nil {
		set, cols, args = set+", task_names = ?", cols+", task_names", append(args, s.long(*tasks))
	}
	if report != nil {
		set, cols, args = set+", node_report = ?", cols+", node_report", append(args, s.long(*report))
	}
	return c.upsert(ctx, func(tx *sql.Tx) error {
		q, a := s.SQL("UPDATE {node} SET "+set+" WHERE node_id = ?", append(slices.Clone(args), s.name(node))...)
		if ok, err := applied(tx.ExecContext(ctx, q, a...)); err != nil || ok {
			return err
		}
		q, a = s.SQL("INSERT INTO {node} (node_id, "+cols+") VALUES (?"+strings.Repeat(", ?", len(args))+")", append([]any{s.name(node)}, args...)...)
		_, err := tx.ExecContext(ctx, q, a...)
		return err
	})
}

// DeregisterNode removes the node's row (graceful stop). Its jobs are left
// as they are. Removing an unknown node is not an error. It implements
// [spi.Store].
func (c Core[T]) DeregisterNode(ctx context.Context, nodeID string) error {
	return c.do("deregister node "+nodeID, func() error {
		return c.exec(ctx, func() (string, []any) { return c.cfg.D.DeregisterSQL(nodeID) })
	})
}

// Running reads the claim sequence of each RUNNING job among ids through
// q, locking them with lock (see RunningSQL), in
// chunks of the dialect's MaxIDs; rows whose id cannot be read are left
// out.
func (d Dialect[T]) Running(ctx context.Context, q Querier, ids []uuid.UUID, lock bool) (map[uuid.UUID]int64, error) {
	cur := make(map[uuid.UUID]int64, len(ids))
	_, err := InChunks(ids, d.chunk(), func(chunk []uuid.UUID) ([]struct{}, error) {
		query, args := d.RunningSQL(chunk, lock)
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var raw T
			var seq int64
			if err := rows.Scan(&raw, &seq); err != nil {
				return nil, err
			}
			if id, err := d.ParseID(raw); err == nil {
				cur[id] = seq
			}
		}
		return nil, rows.Err()
	})
	return cur, err
}

// chunk is the dialect's MaxIDs, or no limit.
func (d Dialect[T]) chunk() int {
	if d.MaxIDs > 0 {
		return d.MaxIDs
	}
	return 1 << 30
}

// CheckClaims reports, for each ref, whether its job is still RUNNING with
// that claim sequence. It implements [spi.ClaimChecker].
func (c Core[T]) CheckClaims(ctx context.Context, refs []spi.ClaimRef) ([]bool, error) {
	out := make([]bool, len(refs))
	err := c.do("check claims", func() error {
		if len(refs) == 0 {
			return nil
		}
		cur, err := c.cfg.D.Running(ctx, c.cfg.DB, DistinctIDs(refs), false)
		for i, r := range refs {
			seq, ok := cur[r.JobID]
			out[i] = ok && seq == r.ClaimSeq
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AdoptClaims returns the jobs RUNNING under node whose claim time is one
// of claimedAt: those of claims whose answer was lost. It implements
// spi.ClaimAdopter.
func (c Core[T]) AdoptClaims(ctx context.Context, node string, claimedAt []time.Time) ([]*spi.Job, error) {
	var out []*spi.Job
	err := c.do("adopt the claims of node "+node, func() error {
		if len(claimedAt) == 0 {
			return nil
		}
		q, args := c.cfg.D.AdoptClaimsSQL(node, claimedAt)
		rows, err := c.cfg.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		out, _, err = c.cfg.D.ReadJobs(rows, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReleaseJobs puts claimed jobs back to PENDING due at now without
// counting an attempt (a node shutting down): each only while its job is
// RUNNING with the named claim sequence, the first ref of each claim only.
// The owner is cleared and the claim sequence advances. It implements
// [spi.Store].
func (c Core[T]) ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	out := make([]bool, len(refs))
	top := -1 // the most urgent priority released, for the wakeup
	err := c.do("release jobs", func() error {
		if len(refs) == 0 {
			return nil
		}
		return c.inTxAt(ctx, nil, func(tx *sql.Tx, at Attempt) error {
			clear(out)
			top = -1
			cur, err := c.cfg.D.Running(ctx, tx, DistinctIDs(refs), true)
			if err != nil {
				return err
			}
			apply := Fenced(refs, cur)
			ids := make([]uuid.UUID, len(apply))
			for k, i := range apply {
				ids[k] = refs[i].JobID
			}
			if err := c.recordRuns(ctx, tx, ids, spi.AttemptReleased, now); err != nil {
				return err
			}
			if _, err := InChunks(ids, c.cfg.D.chunk(), func(chunk []uuid.UUID) ([]struct{}, error) {
				q, args := c.cfg.D.ReleaseSQL(now, chunk)
				_, p, err := c.write(ctx, tx, q, args)
				top = max(top, p)
				return nil, err
			}); err != nil {
				return err
			}
			for _, i := range apply {
				out[i] = true
			}
			if at.Uncertain {
				return c.recognizeReleases(ctx, tx, refs, now, out)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if top >= 0 {
		c.cfg.D.Wake(ctx, top)
	}
	return out, nil
}

// recognizeReleases marks as applied, after a COMMIT whose outcome was
// unknown, the refs (the first of each claim) whose job shows exactly what
// their release wrote: PENDING due at now, no owner, the claim sequence
// one past the ref's. The release of an earlier run then counts, instead
// of being reported superseded.
func (c Core[T]) recognizeReleases(ctx context.Context, tx *sql.Tx, refs []spi.ClaimRef, now time.Time, out []bool) error {
	var ids []uuid.UUID
	pos := FirstOfEach(refs)
	for _, i := range pos {
		if !out[i] {
			ids = append(ids, refs[i].JobID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	jobs, err := c.cfg.D.LoadJobs(ctx, tx, ids)
	if err != nil {
		return err
	}
	byID := make(map[uuid.UUID]*spi.Job, len(jobs))
	for _, j := range jobs {
		byID[j.ID] = j
	}
	due := now.UTC().Truncate(time.Microsecond)
	for _, i := range pos {
		j := byID[refs[i].JobID]
		out[i] = out[i] || j != nil && j.Status == spi.StatusPending && j.OwnerNode == "" &&
			j.ClaimSeq == refs[i].ClaimSeq+1 && j.ScheduledAt.Equal(due)
	}
	return nil
}

// TryAcquireLease gives the lease name to owner until now+ttl when it is
// free, expired (now >= its expiry) or already owner's (a renewal), and
// reports whether owner holds it afterwards: an upsert and a read of the
// owner in one transaction. Name, owner and a positive ttl are required.
// It implements [spi.LeaseStore].
func (c Core[T]) TryAcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	if name == "" || owner == "" || ttl <= 0 {
		return false, c.cfg.Fail("acquire lease", fmt.Errorf("lease %q for %q: name, owner and a positive ttl are required", name, owner))
	}
	var got sql.NullString
	err := c.do("acquire lease "+name, func() error {
		return c.upsert(ctx, func(tx *sql.Tx) error {
			got = sql.NullString{}
			if err := c.acquire(ctx, tx, name, owner, now.Add(ttl), now); err != nil {
				return err
			}
			q, args := c.cfg.D.LeaseOwnerSQL(name)
			if err := tx.QueryRowContext(ctx, q, args...).Scan(&got); !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			return nil
		})
	})
	return got.String == owner, err
}

// acquire gives the lease to owner until until when it is free, expired
// at now or owner's already: the dialect's AcquireLeaseSQL, else (a
// database without an upsert) an update of the lease and, when it changed
// nothing, an insert, whose duplicate key (the lease exists, another's) is
// no error: those databases undo the failed statement only.
func (c Core[T]) acquire(ctx context.Context, tx *sql.Tx, name, owner string, until, now time.Time) error {
	s := &c.cfg.D.Syntax
	if c.cfg.D.AcquireLeaseSQL != nil {
		q, args := c.cfg.D.AcquireLeaseSQL(name, owner, until, now)
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	}
	q, args := s.SQL("UPDATE {lease} SET owner = ?, expires_at = ? WHERE name = ? AND (owner = ? OR expires_at <= ?)",
		s.name(owner), s.time(until), s.name(name), s.name(owner), s.time(now))
	if ok, err := applied(tx.ExecContext(ctx, q, args...)); err != nil || ok {
		return err
	}
	q, args = s.SQL("INSERT INTO {lease} (name, owner, expires_at) VALUES (?, ?, ?)", s.name(name), s.name(owner), s.time(until))
	if _, err := tx.ExecContext(ctx, q, args...); err != nil && (c.cfg.D.IsDuplicate == nil || !c.cfg.D.IsDuplicate(err)) {
		return err
	}
	return nil
}

// ReleaseLease frees the lease if owner holds it; otherwise it does
// nothing. It implements [spi.LeaseStore].
func (c Core[T]) ReleaseLease(ctx context.Context, name, owner string) error {
	return c.do("release lease "+name, func() error {
		return c.exec(ctx, func() (string, []any) { return c.cfg.D.ReleaseLeaseSQL(name, owner) })
	})
}

// PutProperty sets the job's property key to value, write-once: writing
// the same value again is harmless, another value fails with an error
// wrapping spi.ErrPropertyExists. It wraps spi.ErrNotFound for an unknown
// job. One insert, and a read of the key only when the insert wrote
// nothing. It implements [spi.JobPropertyStore].
func (c Core[T]) PutProperty(ctx context.Context, jobID uuid.UUID, key, value string) error {
	if key == "" {
		return c.cfg.Fail("put property", fmt.Errorf("property of job %s: empty key", jobID))
	}
	return c.do("put property", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			q, args := c.cfg.D.PutPropertySQL(jobID, key, value)
			r, err := tx.ExecContext(ctx, q, args...)
			if c.cfg.D.IsDuplicate == nil || !c.cfg.D.IsDuplicate(err) {
				if ok, err := applied(r, err); err != nil || ok {
					return err
				}
			}
			var k, old sql.NullString
			q, args = c.cfg.D.GetPropertySQL(jobID, key)
			err = tx.QueryRowContext(ctx, q, args...).Scan(&k, &old)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("%w: %s", spi.ErrNotFound, jobID)
			case err != nil:
				return err
			case old.String != value:
				return fmt.Errorf("%w: job %s property %q", spi.ErrPropertyExists, jobID, key)
			}
			return nil
		})
	})
}

// applied reports whether a write that returned r and err changed a row.
func applied(r sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n > 0, err
}

// applyState applies one state write in one transaction: it reads the
// job's status and claim sequence with a lock (no claim, completion or
// recovery can change them until the write commits), checks the fence
// (when there is one), and writes: an insert for an init (an existing
// state is a version conflict), a compare-and-set update of the version
// otherwise. Core.InitState and the other writes call it.
func (c Core[T]) applyState(ctx context.Context, w StateWrite) (spi.StateWriteResult, error) {
	var res spi.StateWriteResult
	err := c.do("write state of job "+w.JobID.String(), func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			var status string
			var seq int64
			q, args := c.cfg.D.JobFenceSQL(w.JobID)
			err := tx.QueryRowContext(ctx, q, args...).Scan(&status, &seq)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: %s", spi.ErrNotFound, w.JobID)
			}
			if err != nil {
				return err
			}
			if w.Fence != nil && (status != string(spi.StatusRunning) || seq != *w.Fence) {
				res = spi.StateSuperseded
				return nil
			}
			if w.Init {
				q, args = c.cfg.D.InitStateSQL(w.JobID, w.Namespace, w.State)
			} else {
				q, args = c.cfg.D.UpdateStateSQL(w.JobID, w.Namespace, w.State, w.Expected)
			}
			r, err := tx.ExecContext(ctx, q, args...)
			if w.Init && c.cfg.D.IsDuplicate != nil && c.cfg.D.IsDuplicate(err) {
				res = spi.StateVersionConflict
				return nil
			}
			ok, err := applied(r, err)
			res = spi.StateVersionConflict
			if ok {
				res = spi.StateUpdated
			}
			return err
		})
	})
	return res, err
}

// RecoverOrphans recovers, in one transaction, the RUNNING jobs whose owner
// has no node row, has a heartbeat older than p.Now − p.Grace, or is named
// in p.Nodes: it locks them, and by spi.CrashOutcome puts each back to
// PENDING due at p.Now with its crash count plus one, or fails it into the
// dead-letter queue with p.LastError, finished at p.Now. Either way the
// claim sequence advances and the owner is cleared. The node rows with a
// heartbeat older than the cutoff, and those named in p.Nodes, are deleted.
// The recovered jobs are returned in id order; a row whose id cannot be
// read is recovered but not reported. It implements [spi.Store].
func (c Core[T]) RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	nodes := slices.Compact(slices.Sorted(slices.Values(p.Nodes)))
	if len(nodes) > c.cfg.D.chunk() {
		return nil, c.cfg.Fail("recover orphans", fmt.Errorf("%d nodes named, at most %d", len(nodes), c.cfg.D.chunk()))
	}
	cutoff := p.Now.Add(-p.Grace)
	var out []spi.RecoveredJob
	top := -1 // the most urgent priority requeued, for the wakeup
	err := c.do("recover orphans", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			out, top = nil, -1
			q, args := c.cfg.D.OrphansSQL(cutoff, nodes)
			found, err := c.orphans(ctx, tx, q, args)
			if err == nil && c.cfg.D.LockOrphansSQL != nil {
				ids := make([]T, len(found))
				for i, o := range found {
					ids[i] = o.id
				}
				found, err = InChunks(ids, max(1, c.cfg.D.chunk()-len(nodes)), func(ids []T) ([]orphan[T], error) {
					q, args := c.cfg.D.LockOrphansSQL(cutoff, nodes, ids)
					return c.orphans(ctx, tx, q, args)
				})
			}
			if err != nil {
				return err
			}
			var runs []uuid.UUID
			for _, o := range found {
				if id, err := c.cfg.D.ParseID(o.id); err == nil {
					runs = append(runs, id)
				}
			}
			if err := c.recordRuns(ctx, tx, runs, spi.AttemptCrashed, p.Now); err != nil {
				return err
			}
			var requeue, bury []T
			for _, o := range found {
				rj := spi.RecoveredJob{TaskName: o.task.String, FromNode: o.owner.String}
				rj.NewStatus, rj.CrashCount = spi.CrashOutcome(o.crash, p.MaxCrashRedeliveries)
				if rj.NewStatus == spi.StatusPending {
					requeue, top = append(requeue, o.id), max(top, o.prio)
				} else {
					bury = append(bury, o.id)
				}
				if rj.JobID, err = c.cfg.D.ParseID(o.id); err == nil {
					out = append(out, rj)
				}
			}
			// The rows are locked: the writes apply to every one of them.
			for _, w := range []struct {
				ids  []T
				stmt func([]T) (string, []any)
			}{
				{requeue, func(ids []T) (string, []any) { return c.cfg.D.RequeueSQL(p.Now, ids) }},
				{bury, func(ids []T) (string, []any) { return c.cfg.D.BurySQL(p.Now, p.LastError, ids) }},
			} {
				if _, err := InChunks(w.ids, c.cfg.D.chunk(), func(ids []T) ([]struct{}, error) {
					q, args := w.stmt(ids)
					_, err := tx.ExecContext(ctx, q, args...)
					return nil, err
				}); err != nil {
					return err
				}
			}
			if len(bury) > 0 {
				// A job the crash budget failed releases its dependents
				// (its failure callbacks among them).
				var failed []uuid.UUID
				for _, raw := range bury {
					if id, err := c.cfg.D.ParseID(raw); err == nil {
						failed = append(failed, id)
					}
				}
				released, err := c.finishWithDependents(ctx, tx, failed, spi.StatusFailed, p.Now)
				if err != nil {
					return err
				}
				if released {
					top = max(top, int(spi.PriorityNormal))
				}
			}
			q, args = c.cfg.D.DeleteNodesSQL(cutoff, nodes)
			_, err = tx.ExecContext(ctx, q, args...)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b spi.RecoveredJob) int { return bytes.Compare(a.JobID[:], b.JobID[:]) })
	if top >= 0 && c.cfg.D.Wake != nil {
		c.cfg.D.Wake(ctx, top)
	}
	return out, nil
}

// orphan is a row of OrphansSQL.
type orphan[T any] struct {
	id          T
	task, owner sql.NullString
	crash, prio int
}

// orphans reads the rows of an OrphansSQL or LockOrphansSQL query.
func (c Core[T]) orphans(ctx context.Context, tx *sql.Tx, q string, args []any) ([]orphan[T], error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []orphan[T]
	for rows.Next() {
		var o orphan[T]
		if err := rows.Scan(&o.id, &o.task, &o.owner, &o.crash, &o.prio); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// The row codec of a dialect: how the job columns of JobColumns read back.
// Dialect holds its parts: ParseID and IDText for the id, TimeOf for times,
// Tags for the tags column.

// timeOf converts a scanned time column (nil for NULL: the zero time).
func (d Dialect[T]) timeOf(v any) (time.Time, error) {
	if v == nil {
		return time.Time{}, nil
	}
	if d.TimeOf != nil {
		return d.TimeOf(v)
	}
	t, ok := v.(time.Time)
	if !ok {
		return time.Time{}, fmt.Errorf("a time column holds %T", v)
	}
	return t.UTC(), nil
}

// Decode reads the current row of rows, the columns of JobColumns, and
// returns its job, or an error wrapping spi.ErrCorruptJob that names the
// job and the problem; raw is the stored id and seq the claim sequence
// (as far as they could be read) either way, for the claim to fail a
// corrupt row by them.
func (d Dialect[T]) Decode(rows Scanner) (job *spi.Job, raw T, seq int64, err error) {
	var (
		r                                 Row
		task, backoff, owner, lastErr     sql.NullString
		rtype, idem, res, tags            sql.NullString
		payloadNull, resultNull           int64
		scheduled, created, claimed, fini any
		workflow                          sql.Null[T]
	)
	err = rows.Scan(&raw, &task, &r.Payload, &payloadNull, &r.Status, &r.Priority,
		&scheduled, &created, &r.Attempts, &r.MaxRetries, &backoff, &r.BackoffParamUS,
		&r.ClaimSeq, &r.CrashCount, &owner, &claimed, &fini, &lastErr,
		&r.Result, &resultNull, &rtype, &idem, &r.Params, &res, &r.ResourceLimit,
		&workflow, &r.DepCount, &r.DepWaiting, &r.DepChildren, &r.TraceContext, &r.Snoozes, &tags)
	r.Task, r.Backoff, r.OwnerNode, r.LastError = task.String, backoff.String, owner.String, lastErr.String
	r.ResultType, r.IdempotencyKey, r.Resource = rtype.String, idem.String, res.String
	r.Payload, r.Result = Blob(r.Payload, payloadNull != 0), Blob(r.Result, resultNull != 0)
	var timeErr error
	if err == nil {
		for _, t := range []struct {
			v   any
			out *time.Time
		}{{scheduled, &r.Scheduled}, {created, &r.Created}, {claimed, &r.Claimed}, {fini, &r.Finished}} {
			if *t.out, timeErr = d.timeOf(t.v); timeErr != nil {
				break
			}
		}
	}
	return d.Finish(&r, raw, workflow, tags, err, timeErr)
}

// Finish returns the job of a row that Decode, or a dialect's own scan of
// the columns of JobColumns, read into r (with its text, blob and time
// columns converted) and raw, workflow and tags; err is the error of that
// scan, timeErr that of converting a time column. It parses the ids, the
// params and the tags and checks the row as Decode does: the results are
// Decode's.
func (d Dialect[T]) Finish(r *Row, raw T, workflow sql.Null[T], tags sql.NullString, err, timeErr error) (job *spi.Job, _ T, seq int64, _ error) {
	if r.ID, err = d.parse(raw, err); err != nil {
		return nil, raw, r.ClaimSeq, err
	}
	if workflow.Valid {
		if r.WorkflowID, err = d.ParseID(workflow.V); err != nil {
			return nil, raw, r.ClaimSeq, Corrupt(r.ID.String(), "unreadable workflow id: %v", err)
		}
	}
	r.Params.Valid = r.Params.Valid && r.Params.String != "" // Oracle's NULL for ""
	if timeErr != nil {
		return nil, raw, r.ClaimSeq, Corrupt(r.ID.String(), "unreadable time: %v", timeErr)
	}
	if tags.Valid && tags.String != "" {
		if r.Tags, err = d.Tags(tags.String); err != nil {
			return nil, raw, r.ClaimSeq, Corrupt(r.ID.String(), "unreadable tags: %v", err)
		}
	}
	job, err = r.Job()
	return job, raw, r.ClaimSeq, err
}

// parse converts the scanned id of a row whose scan returned err: an
// unreadable column names the row by its id as far as it was read.
func (d Dialect[T]) parse(raw T, err error) (uuid.UUID, error) {
	id, perr := d.ParseID(raw)
	switch {
	case err != nil:
		return id, Corrupt(d.IDText(raw), "unreadable column: %v", err)
	case perr != nil:
		return id, perr
	}
	return id, nil
}

// JSONTags reads a tags column holding a JSON array of strings (nil for
// an empty one).
func JSONTags(s string) ([]string, error) {
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil || len(out) == 0 {
		return nil, err
	}
	return out, nil
}

// Decoder returns the decoder of the current row of rows, for ReadOne and
// ReadPage.
func (d Dialect[T]) Decoder(rows *sql.Rows) func() (*spi.Job, error) {
	return func() (*spi.Job, error) {
		j, _, _, err := d.Decode(rows)
		return j, err
	}
}

// LoadJobs reads through q the jobs of ids that exist and can be decoded
// (with JobsSQL, in chunks), for Recognize.
func (d Dialect[T]) LoadJobs(ctx context.Context, q Querier, ids []uuid.UUID) ([]*spi.Job, error) {
	return InChunks(ids, d.chunk(), func(ids []uuid.UUID) ([]*spi.Job, error) {
		query, args := d.JobsSQL(ids)
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		got, _, err := d.ReadJobs(rows, nil)
		return got, err
	})
}

// BadRow is a job row that could not be decoded: a claim fails it into the
// dead-letter queue by its stored id and claim sequence.
type BadRow[T any] struct {
	ID  T
	Seq int64
	Err error
}

// ReadJobs decodes the job rows of rows, keeping those whose stored id
// passes keep (all when keep is nil); the rows that cannot be decoded are
// returned apart. The caller closes rows.
func (d Dialect[T]) ReadJobs(rows *sql.Rows, keep func(T) bool) ([]*spi.Job, []BadRow[T], error) {
	var got []*spi.Job
	var bad []BadRow[T]
	for rows.Next() {
		j, raw, seq, err := d.Decode(rows)
		switch {
		case keep != nil && !keep(raw):
		case err != nil:
			bad = append(bad, BadRow[T]{raw, seq, err})
		default:
			got = append(got, j)
		}
	}
	return got, bad, rows.Err()
}

// WallClock is the TimeOf of a dialect whose driver returns a time column
// as a time.Time whose wall clock is UTC, whatever its location (SQL
// Server's DATETIME2, Oracle's TIMESTAMP).
func WallClock(v any) (time.Time, error) {
	t, ok := v.(time.Time)
	if !ok {
		return time.Time{}, fmt.Errorf("a time column holds %T", v)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC), nil
}
