package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// This file holds the methods of Core that read jobs, write them as an
// administrator, insert and complete them, and the reads of the optional
// capabilities (state, properties, nodes).

// GetJob returns one job with its tags and params, an error wrapping
// spi.ErrNotFound that names the id, or one wrapping spi.ErrCorruptJob when
// the row cannot be read back. It implements [spi.Store].
func (c Core[T]) GetJob(ctx context.Context, id uuid.UUID) (*spi.Job, error) {
	var j *spi.Job
	err := c.do("get job "+id.String(), func() error {
		q, args := c.cfg.D.GetJobSQL(id)
		rows, err := c.cfg.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		if j, err = ReadOne(rows, id, c.cfg.D.Decoder(rows)); err != nil {
			return err
		}
		rows.Close()
		return c.fillSignals(ctx, c.cfg.DB, []*spi.Job{j})
	})
	return j, err
}

// ListJobs returns up to p.Limit jobs (DefaultPageSize when zero or less)
// with an id greater than p.After, in id order (the byte order of the
// ids, which is the order of the UUIDs), optionally filtered by status,
// and the cursor of the next page: the last listed id when more jobs
// follow, the zero UUID otherwise. A row that cannot be read back fails
// the page with an error wrapping spi.ErrCorruptJob. An unknown status
// lists nothing. It implements [spi.Store].
func (c Core[T]) ListJobs(ctx context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	return c.listPage(ctx, "list jobs", true, p, c.cfg.D.ListJobsSQL)
}

// listPage reads one page of a listing whose statement is query(p,
// limit): the live jobs' or the archive's; with signals, it fills the
// Signal of the jobs that wait, or waited, for one.
func (c Core[T]) listPage(ctx context.Context, op string, signals bool, p spi.ListParams, query func(spi.ListParams, int) (string, []any)) ([]*spi.Job, uuid.UUID, error) {
	jobs, next := []*spi.Job{}, uuid.Nil
	err := c.do(op, func() error {
		if p.Status != "" && !p.Status.Valid() {
			return nil
		}
		limit := PageSize(p)
		q, args := query(p, limit+1)
		rows, err := c.cfg.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		jobs, next, err = ReadPage(rows, limit, c.cfg.D.Decoder(rows))
		rows.Close()
		if err != nil || !signals {
			return err
		}
		return c.fillSignals(ctx, c.cfg.DB, jobs)
	})
	if err != nil {
		return nil, uuid.Nil, err
	}
	return jobs, next, nil
}

// CountJobs counts, up to limit, the jobs ListJobs would list from p.After
// on, reading no more than limit rows. It implements [spi.JobCounter].
func (c Core[T]) CountJobs(ctx context.Context, p spi.ListParams, limit int) (int, error) {
	n := 0
	if limit <= 0 || (p.Status != "" && !p.Status.Valid()) {
		return 0, nil
	}
	err := c.do("count jobs", func() error {
		q, args := c.cfg.D.CountJobsSQL(p, limit)
		return c.cfg.DB.QueryRowContext(ctx, q, args...).Scan(&n)
	})
	return n, err
}

// RetryFailedJob moves a FAILED job out of the dead-letter queue: status
// PENDING due at now, last error cleared, attempts and crash count zero,
// finish time and owner cleared. It wraps spi.ErrNotFound for an unknown id
// and spi.ErrInvalidState, naming the actual status, for a job that is not
// FAILED. It implements [spi.Store].
func (c Core[T]) RetryFailedJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	return c.transition(ctx, "retry job", c.cfg.D.RetryFailedSQL, id, now, "FAILED", "retried", func(tx *sql.Tx) error {
		return c.revive(ctx, tx, id)
	})
}

// CancelJob moves a PENDING, BLOCKED or WAITING job to CANCELLED with its
// finish time at now, resolving the wait of a WAITING one CANCELLED, or a
// RUNNING one with its claim ended (spi.Aborted), and releases its
// dependents in the same transaction. It wraps spi.ErrNotFound for an
// unknown id and spi.ErrInvalidState, naming the actual status, for a
// finished job. It implements [spi.Store].
func (c Core[T]) CancelJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	var res cancelled
	err := c.do("cancel job", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) (err error) {
			if res, err = c.cancelOne(ctx, tx, id, now); err != nil || res.ok {
				return err
			}
			return c.stateError(ctx, tx, id, "PENDING, BLOCKED, WAITING and RUNNING", "cancelled")
		})
	})
	if err == nil {
		c.afterCancel(ctx, res)
	}
	return err
}

// transition runs one guarded UPDATE in a transaction, then after in the
// same transaction, and, when it changed nothing, reads the job's status
// to say why. With the dialect's Wake, the UPDATE returns the job's
// priority, and a job back to PENDING wakes the pollers.
func (c Core[T]) transition(ctx context.Context, op string, update func(uuid.UUID, time.Time) (string, []any), id uuid.UUID, now time.Time, from, verb string, after func(*sql.Tx) error) error {
	prio := -1
	err := c.do(op, func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			q, args := update(id, now)
			n, p, err := c.write(ctx, tx, q, args)
			if prio = p; err != nil {
				return err
			}
			if n > 0 {
				return after(tx)
			}
			return c.stateError(ctx, tx, id, from, verb)
		})
	})
	if err == nil && prio >= 0 && from == "FAILED" {
		c.cfg.D.Wake(ctx, prio)
	}
	return err
}

// stateError reads job id's status in tx to say why a transition from
// the states from changed nothing: an error wrapping spi.ErrNotFound or
// spi.ErrInvalidState.
func (c Core[T]) stateError(ctx context.Context, tx *sql.Tx, id uuid.UUID, from, verb string) error {
	st, err := c.statusIn(ctx, tx, id)
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: job %s is %s, only %s jobs can be %s", spi.ErrInvalidState, id, st, from, verb)
}

// statusIn reads job id's status in tx; an unknown id wraps
// spi.ErrNotFound.
func (c Core[T]) statusIn(ctx context.Context, tx *sql.Tx, id uuid.UUID) (string, error) {
	var st string
	q, args := c.cfg.D.StatusSQL(id)
	err := tx.QueryRowContext(ctx, q, args...).Scan(&st)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	return st, err
}

// InsertJobs writes new PENDING jobs in one transaction. A job whose
// IdempotencyKey already exists, in the database or earlier in the same
// batch, is not written: its result carries the existing id and
// Duplicate. The stored status is PENDING whatever Job.Status says. An
// invalid job (see spi.ValidateJobs) fails the whole batch before anything
// is written, and so does an id that already exists. It implements
// [spi.Store].
func (c Core[T]) InsertJobs(ctx context.Context, jobs []*spi.Job, _ spi.InsertOptions) ([]spi.InsertResult, error) {
	var res []spi.InsertResult
	err := c.do("insert jobs", func() (err error) {
		res, err = c.insert(ctx, nil, jobs)
		return err
	})
	return res, err
}

// InsertJobsTx is InsertJobs inside txAny, a transaction that the
// application began on the store's database handle (or on another handle
// to the same database): the jobs exist only if it commits. txAny must be
// a *sql.Tx. It is not retried: a retryable error leaves the application's
// transaction to roll back and run again. It implements [spi.TxInserter].
func (c Core[T]) InsertJobsTx(ctx context.Context, txAny any, jobs []*spi.Job, _ spi.InsertOptions) ([]spi.InsertResult, error) {
	var res []spi.InsertResult
	err := c.do("insert jobs", func() error {
		tx, err := SQLTx(txAny, c.cfg.D.Name())
		if err == nil {
			res, err = c.insert(ctx, tx, jobs)
		}
		return err
	})
	return res, err
}

// validateJobs checks a batch of new jobs with the dialect's ValidateJobs
// (spi.ValidateJobs when it has none).
func (c Core[T]) validateJobs(jobs []*spi.Job) error {
	if c.cfg.D.ValidateJobs != nil {
		return c.cfg.D.ValidateJobs(jobs)
	}
	return spi.ValidateJobs(jobs)
}

// insert validates jobs and inserts them in tx, or in a transaction of its
// own when tx is nil.
func (c Core[T]) insert(ctx context.Context, tx *sql.Tx, jobs []*spi.Job) (res []spi.InsertResult, err error) {
	if err := c.validateJobs(jobs); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return []spi.InsertResult{}, nil
	}
	if tx != nil {
		return c.cfg.D.Insert(ctx, tx, jobs, false)
	}
	err = c.inTxAt(ctx, c.cfg.D.InsertRetryable, func(tx *sql.Tx, at Attempt) error {
		res, err = c.cfg.D.Insert(ctx, tx, jobs, at.Uncertain)
		return err
	})
	return res, err
}

// CompleteJobs applies a batch of fenced owner writes in one transaction.
// Each applies only while its job is RUNNING with the named claim
// sequence; the result has one entry per completion, true when it applied.
// When one claim appears more than once in the batch, only its first
// completion can apply. SUCCEEDED sets the finish time, result and result
// type; RETRY puts the job back to PENDING at RetryAt with the new attempt
// count and last error and the owner cleared; SNOOZED puts it back to
// PENDING at RetryAt with the new snooze count and the owner cleared;
// FAILED sets the attempt count, last error and finish time. The claim
// sequence does not change. An unknown outcome fails the whole batch
// before anything is written.
//
// A retryable error runs the transaction again. A completion whose job
// already shows exactly what it writes (the batch of an earlier run whose
// COMMIT failed, or of an earlier call whose answer was lost) counts as
// applied (see Recognize), so a completion is neither lost nor reported
// superseded because of the retry. It implements [spi.Store].
//
// Workflow completions (a job with dependents, a skip, a cancel), snoozes
// and waits (OneByOne) are written one by one in the same transaction; a
// wait that applied replaces the job's signal row (rewait), and those
// that finish a job
// with dependents release them (see finish): the dialect's batched write
// stays the path of every other job.
func (c Core[T]) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	out := make([]bool, len(cs))
	released := false
	err := c.do("complete jobs", func() error {
		if err := ValidOutcomes(cs); err != nil || len(cs) == 0 {
			return err
		}
		pos := FirstOfEach(Refs(cs))
		plain, flow := pos, []int(nil)
		if slices.ContainsFunc(cs, OneByOne) {
			plain = nil
			for _, i := range pos {
				if OneByOne(cs[i]) {
					flow = append(flow, i)
				} else {
					plain = append(plain, i)
				}
			}
		}
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			clear(out)
			released = false
			if len(plain) > 0 {
				if err := c.cfg.D.WriteCompletions(ctx, tx, cs, plain, out); err != nil {
					return err
				}
			}
			s := &c.cfg.D.Syntax
			for _, i := range flow {
				q, args := s.Completion(cs[i])
				q, args = s.SQL(q, args...)
				var err error
				if out[i], err = applied(tx.ExecContext(ctx, q, args...)); err != nil {
					return err
				}
				if out[i] && cs[i].Outcome == spi.OutcomeWaiting {
					if err := c.cfg.D.rewait(ctx, tx, cs[i].JobID, cs[i].Signal); err != nil {
						return err
					}
				}
			}
			if err := c.completionAttempts(ctx, tx, cs, pos, out); err != nil {
				return err
			}
			if err := Recognize(cs, pos, out, func(ids []uuid.UUID) ([]*spi.Job, error) { return c.cfg.D.LoadJobs(ctx, tx, ids) }); err != nil {
				return err
			}
			var parents []finished
			for _, i := range flow {
				if st := cs[i].Outcome.Status(); out[i] && cs[i].HasDependents && st.Terminal() {
					parents = append(parents, finished{cs[i].JobID, st})
				}
			}
			var err error
			released, err = c.cfg.D.finish(ctx, tx, parents, latest(cs, flow))
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	if released && c.cfg.D.Wake != nil {
		c.cfg.D.Wake(ctx, int(spi.PriorityNormal))
	}
	return out, nil
}

// latest is the latest finish time among the completions of cs at pos:
// the time the children they release are due at.
func latest(cs []spi.Completion, pos []int) time.Time {
	var t time.Time
	for _, i := range pos {
		if cs[i].FinishedAt.After(t) {
			t = cs[i].FinishedAt
		}
	}
	return t
}

// GetState returns the state of the job's namespace and whether it exists.
// It wraps spi.ErrNotFound for an unknown job. It implements
// [spi.JobStateStore].
func (c Core[T]) GetState(ctx context.Context, jobID uuid.UUID, namespace string) (spi.VersionedState, bool, error) {
	var st spi.VersionedState
	var found bool
	err := c.do("get state of job "+jobID.String(), func() error {
		var state []byte
		var version sql.NullInt64
		q, args := c.cfg.D.GetStateSQL(jobID, namespace)
		err := c.cfg.DB.QueryRowContext(ctx, q, args...).Scan(&state, &version)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", spi.ErrNotFound, jobID)
		}
		if err != nil || !version.Valid {
			return err
		}
		if len(state) == 0 {
			state = nil
		}
		st, found = spi.VersionedState{JSON: state, Version: version.Int64}, true
		return nil
	})
	return st, found, err
}

// InitState creates the namespace's state at version 0 while the job is
// RUNNING with claimSeq: StateSuperseded otherwise, StateVersionConflict
// when the state exists. It implements [spi.JobStateStore].
func (c Core[T]) InitState(ctx context.Context, jobID uuid.UUID, namespace string, state []byte, claimSeq int64) (spi.StateWriteResult, error) {
	return c.writeState(ctx, StateWrite{JobID: jobID, Namespace: namespace, State: state, Init: true, Fence: &claimSeq})
}

// UpdateState replaces the namespace's state and increments its version
// when the version is expectedVersion and the job is RUNNING with claimSeq:
// StateSuperseded when the fence fails, StateVersionConflict when the
// version differs or the state does not exist. It implements
// [spi.JobStateStore].
func (c Core[T]) UpdateState(ctx context.Context, jobID uuid.UUID, namespace string, state []byte, expectedVersion, claimSeq int64) (spi.StateWriteResult, error) {
	return c.writeState(ctx, StateWrite{JobID: jobID, Namespace: namespace, State: state, Expected: expectedVersion, Fence: &claimSeq})
}

// InitStateUnfenced is InitState for a writer that owns no claim. It
// implements [spi.JobStateStore].
func (c Core[T]) InitStateUnfenced(ctx context.Context, jobID uuid.UUID, namespace string, state []byte) (spi.StateWriteResult, error) {
	return c.writeState(ctx, StateWrite{JobID: jobID, Namespace: namespace, State: state, Init: true})
}

// UpdateStateUnfenced is UpdateState for a writer that owns no claim. It
// implements [spi.JobStateStore].
func (c Core[T]) UpdateStateUnfenced(ctx context.Context, jobID uuid.UUID, namespace string, state []byte, expectedVersion int64) (spi.StateWriteResult, error) {
	return c.writeState(ctx, StateWrite{JobID: jobID, Namespace: namespace, State: state, Expected: expectedVersion})
}

// writeState applies w with the dialect's WriteState, or Core's.
func (c Core[T]) writeState(ctx context.Context, w StateWrite) (spi.StateWriteResult, error) {
	if w.State == nil {
		w.State = []byte{}
	}
	if c.cfg.D.CheckState != nil {
		if err := c.cfg.D.CheckState(w); err != nil {
			return 0, c.cfg.Fail("write state of job "+w.JobID.String(), err)
		}
	}
	if c.cfg.D.WriteState != nil {
		return c.cfg.D.WriteState(ctx, w)
	}
	return c.applyState(ctx, w)
}

// GetProperty returns the job's property key and whether it is set. It
// wraps spi.ErrNotFound for an unknown job. It implements
// [spi.JobPropertyStore].
func (c Core[T]) GetProperty(ctx context.Context, jobID uuid.UUID, key string) (string, bool, error) {
	var k, v sql.NullString
	err := c.do("get property", func() error {
		q, args := c.cfg.D.GetPropertySQL(jobID, key)
		err := c.cfg.DB.QueryRowContext(ctx, q, args...).Scan(&k, &v)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", spi.ErrNotFound, jobID)
		}
		return err
	})
	return v.String, k.Valid, err
}

// GetPropertiesByPrefix returns the job's properties whose key starts with
// prefix, byte for byte ("" for all; no character of the prefix is a
// wildcard). It wraps spi.ErrNotFound for an unknown job. It implements
// [spi.JobPropertyStore].
func (c Core[T]) GetPropertiesByPrefix(ctx context.Context, jobID uuid.UUID, prefix string) (map[string]string, error) {
	var out map[string]string
	err := c.do("get properties", func() error {
		q, args := c.cfg.D.PropertiesByPrefixSQL(jobID, prefix)
		rows, err := c.cfg.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		out, err = ReadProperties(rows, jobID)
		return err
	})
	return out, err
}

// FindJobsByProperty returns up to limit ids (all when limit <= 0), in
// ascending order, of the jobs whose property key equals value, from the
// index on (prop_key, prop_value, job_id). It implements
// [spi.JobPropertyStore].
func (c Core[T]) FindJobsByProperty(ctx context.Context, key, value string, limit int) ([]uuid.UUID, error) {
	var out []uuid.UUID
	err := c.do("find jobs by property", func() error {
		q, args := c.cfg.D.FindByPropertySQL(key, value, limit)
		rows, err := c.cfg.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		out, err = ReadIDs(rows, c.cfg.D.ParseID)
		return err
	})
	return out, err
}

// HeartbeatTasks is Heartbeat that records the node's tasks too (in their
// EncodeTasks form). It implements [spi.NodeTaskStore].
func (c Core[T]) HeartbeatTasks(ctx context.Context, nodeID string, tasks []string, now time.Time) error {
	enc := EncodeTasks(tasks)
	return c.do("heartbeat "+nodeID, func() error { return c.heartbeat(ctx, nodeID, &enc, nil, now) })
}

// HeartbeatReport is HeartbeatTasks that records the node's report too
// (in its spi.EncodeNodeReport form, in node_report). It implements
// [spi.NodeReportStore].
func (c Core[T]) HeartbeatReport(ctx context.Context, nodeID string, tasks []string, report spi.NodeReport, now time.Time) error {
	enc, rep := EncodeTasks(tasks), spi.EncodeNodeReport(report)
	return c.do("heartbeat "+nodeID, func() error { return c.heartbeat(ctx, nodeID, &enc, &rep, now) })
}

// LiveNodes returns the nodes whose heartbeat is at or after since, with
// their tasks, ordered by id. It implements [spi.NodeTaskStore].
func (c Core[T]) LiveNodes(ctx context.Context, since time.Time) ([]spi.NodeInfo, error) {
	q, args := c.cfg.D.LiveNodesSQL(since)
	out, err := queryAll(ctx, c, "list the live nodes", q, args, func(rows *sql.Rows) (spi.NodeInfo, error) {
		var n spi.NodeInfo
		var hb any
		var tasks, report sql.NullString
		if err := rows.Scan(&n.ID, &hb, &tasks, &report); err != nil {
			return n, err
		}
		n.Report = decodeReport(report)
		var err error
		if n.Tasks, err = decodeTasks(n.ID, tasks); err != nil {
			return n, err
		}
		if n.Heartbeat, err = c.cfg.D.timeOf(hb); err != nil {
			return n, fmt.Errorf("node %q: %w", n.ID, err)
		}
		return n, nil
	})
	slices.SortFunc(out, func(a, b spi.NodeInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, err
}

// PendingTasks counts the PENDING jobs per task, with the earliest due
// time of each, ordered by task: one pass over the PENDING entries of the
// claim index. It implements [spi.NodeTaskStore].
func (c Core[T]) PendingTasks(ctx context.Context) ([]spi.TaskBacklog, error) {
	out, err := queryAll(ctx, c, "count the pending jobs per task", c.cfg.D.PendingCountSQL, nil, func(rows *sql.Rows) (spi.TaskBacklog, error) {
		var b spi.TaskBacklog
		var earliest any
		if err := rows.Scan(&b.Task, &b.Pending, &earliest); err != nil {
			return b, err
		}
		var err error
		if b.Earliest, err = c.cfg.D.timeOf(earliest); err != nil {
			return b, fmt.Errorf("task %q: %w", b.Task, err)
		}
		return b, nil
	})
	slices.SortFunc(out, func(a, b spi.TaskBacklog) int { return strings.Compare(a.Task, b.Task) })
	return out, err
}
