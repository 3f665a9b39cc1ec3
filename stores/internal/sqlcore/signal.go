package sqlcore

import (
	"bytes"
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

// Signals (spi.SignalStore), in the portable SQL of every dialect
// (migration 9). A job inserted with a signal wait is written PENDING, then
// moved to WAITING in the same transaction, and gets a row of {signal}
// (name, key, deadline; outcome NULL while it waits). Nothing is added to
// the job row, and the claim never reads {signal}. Every resolution (a
// delivery, a timeout, a cancel) is a guarded UPDATE of the job row that
// requires it WAITING (and, for a delivery, the wait unresolved and of
// that name), then the UPDATE of its signal row, in one transaction: the
// row lock on the job puts two racing resolutions one after the other, and
// the second finds the job no longer WAITING. The reads (GetJob, ListJobs,
// WorkflowJobs) fill Job.Signal with one more query per page.

// SignalBatch reports whether a job of jobs awaits a signal.
func SignalBatch(jobs []*spi.Job) bool {
	return slices.ContainsFunc(jobs, func(j *spi.Job) bool { return j.Signal != nil })
}

// AwaitStatements are the statements that make the new jobs of an insert
// that await a signal WAITING and write their waits, once they are written
// as PENDING in the same transaction. None for a batch without a wait. A
// store whose insert does not run through Core (PostgreSQL's) runs them
// itself, for the jobs it did write.
func (d Dialect[T]) AwaitStatements(jobs []*spi.Job) []Statement {
	s := &d.Syntax
	var waits []*spi.Job
	for _, j := range jobs {
		if j.Signal != nil {
			waits = append(waits, j)
		}
	}
	if len(waits) == 0 {
		return nil
	}
	var out []Statement
	for start := 0; start < len(waits); start += d.chunk() {
		chunk := waits[start:min(len(waits), start+d.chunk())]
		q, a := s.SQL("UPDATE {job} SET status = 'WAITING' WHERE status = 'PENDING' AND job_id IN (?)", s.ids(Conv(chunk, jobID)))
		out = append(out, Statement{q, a})
	}
	per := 250
	if s.MaxArgs > 0 {
		per = max(1, min(per, s.MaxArgs/4))
	}
	for start := 0; start < len(waits); start += per {
		chunk := waits[start:min(len(waits), start+per)]
		q, a := s.insertWaits(chunk)
		out = append(out, Statement{q, a})
	}
	return out
}

// jobID is the id of j.
func jobID(j *spi.Job) uuid.UUID { return j.ID }

// await runs AwaitStatements through q.
func (d Dialect[T]) await(ctx context.Context, q DBTX, jobs []*spi.Job) error {
	for _, st := range d.AwaitStatements(jobs) {
		if _, err := q.ExecContext(ctx, st.SQL, st.Args...); err != nil {
			return fmt.Errorf("write the signal waits: %w", err)
		}
	}
	return nil
}

// rewait replaces the signal row of job id, which a waiting completion
// (spi.OutcomeWaiting) just made WAITING, with w unresolved: the wait a
// RUNNING job's body started (ratchet.WaitSignal). It runs in the
// completion's transaction, after the fenced update that applied.
func (d Dialect[T]) rewait(ctx context.Context, q DBTX, id uuid.UUID, w *spi.SignalWait) error {
	s := &d.Syntax
	drop, dropArgs := s.dropWaits([]uuid.UUID{id})
	ins, insArgs := s.insertWaits([]*spi.Job{{ID: id, Signal: w}})
	for _, st := range []Statement{{drop, dropArgs}, {ins, insArgs}} {
		if _, err := q.ExecContext(ctx, st.SQL, st.Args...); err != nil {
			return fmt.Errorf("write the signal wait of job %s: %w", id, err)
		}
	}
	return nil
}

// insertWaits inserts the unresolved waits of jobs.
func (s *Syntax) insertWaits(jobs []*spi.Job) (string, []any) {
	args := make([]any, 0, 4*len(jobs))
	for _, j := range jobs {
		w := j.Signal
		args = append(args, s.id(j.ID), s.name(w.Name), s.nullName(w.Key), s.time(w.Deadline))
	}
	return s.SQL("INSERT INTO {signal} (job_id, name, signal_key, deadline) VALUES "+
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", len(jobs)), ", "), args...)
}

// readWaits reads the waits of the jobs of ids.
func (s *Syntax) readWaits(ids []uuid.UUID) (string, []any) {
	return s.SQL(`SELECT job_id, name, signal_key, deadline, outcome, payload,
		CASE WHEN payload IS NULL THEN 1 ELSE 0 END, resolved_at
	FROM {signal} WHERE job_id IN (?)`, s.ids(ids))
}

// wakeJob is the guarded resolution of job id's wait at now: a WAITING job
// whose wait is unresolved (and, with byName, for signal name) becomes
// PENDING, due at now.
func (s *Syntax) wakeJob(id uuid.UUID, name string, byName bool, now time.Time) (string, []any) {
	cond, args := "", []any{s.id(id), s.id(id)}
	if byName {
		cond, args = " AND g.name = ?", append(args, s.name(name))
	}
	return s.Update(spi.Woken(spi.SignalDelivered, now),
		"job_id = ? AND EXISTS (SELECT 1 FROM {signal} g WHERE g.job_id = ? AND g.outcome IS NULL"+cond+")", args...)
}

// resolveWait records on job id's unresolved wait that it ended at now
// with outcome o and payload (a delivery's; nil otherwise).
func (s *Syntax) resolveWait(id uuid.UUID, o spi.SignalOutcome, payload []byte, now time.Time) (string, []any) {
	if s.EmptyBlob != "" && payload != nil && len(payload) == 0 {
		return s.SQL("UPDATE {signal} SET outcome = '"+string(o)+"', payload = "+s.EmptyBlob+", resolved_at = ?\n\tWHERE job_id = ? AND outcome IS NULL",
			s.time(now), s.id(id))
	}
	return s.SQL("UPDATE {signal} SET outcome = '"+string(o)+"', payload = ?, resolved_at = ?\n\tWHERE job_id = ? AND outcome IS NULL",
		s.blob(payload), s.time(now), s.id(id))
}

// resolvedJob reads (task_name, priority, name) of job id and its wait.
func (s *Syntax) resolvedJob(id uuid.UUID) (string, []any) {
	return s.SQL("SELECT j.task_name, j.priority, g.name FROM {job} j JOIN {signal} g ON g.job_id = j.job_id WHERE j.job_id = ?", s.id(id))
}

// waitState reads (status, name, outcome, payload, resolved_at) of job id
// and its wait, if any: why a resolution did not apply, or whether an
// earlier run applied it.
func (s *Syntax) waitState(id uuid.UUID) (string, []any) {
	return s.SQL(`SELECT j.status, g.name, g.outcome, g.payload, g.resolved_at FROM {job} j
	LEFT JOIN {signal} g ON g.job_id = j.job_id WHERE j.job_id = ?`, s.id(id))
}

// keyedWaits reads the ids of up to limit unresolved waits for signal name
// with key, in id order.
func (s *Syntax) keyedWaits(key, name string, limit int) (string, []any) {
	return s.limited("SELECT job_id FROM {signal} WHERE signal_key = ? AND name = ? AND outcome IS NULL ORDER BY job_id",
		int64(limit), s.name(key), s.name(name))
}

// dueWaits reads the ids of up to limit unresolved waits whose deadline is
// not after now, in deadline order.
func (s *Syntax) dueWaits(now time.Time, limit int) (string, []any) {
	return s.limited("SELECT job_id FROM {signal} WHERE outcome IS NULL AND deadline IS NOT NULL AND deadline <= ? ORDER BY deadline, job_id",
		int64(limit), s.time(now))
}

// cancelWait resolves job id's wait CANCELLED at now, if it is unresolved:
// the job was WAITING when CancelJob cancelled it.
func (s *Syntax) cancelWait(id uuid.UUID, now time.Time) (string, []any) {
	return s.SQL("UPDATE {signal} SET outcome = 'CANCELLED', resolved_at = ? WHERE job_id = ? AND outcome IS NULL", s.time(now), s.id(id))
}

// cancelFlowWaits resolves CANCELLED at now the unresolved waits of the
// cancelled jobs of workflow id: those CancelWorkflow found WAITING.
func (s *Syntax) cancelFlowWaits(id uuid.UUID, now time.Time) (string, []any) {
	return s.SQL(`UPDATE {signal} SET outcome = 'CANCELLED', resolved_at = ?
	WHERE outcome IS NULL AND job_id IN (SELECT job_id FROM {job} WHERE workflow_id = ? AND status = 'CANCELLED')`, s.time(now), s.id(id))
}

// dropWaits deletes the waits of the jobs of ids (archived).
func (s *Syntax) dropWaits(ids []uuid.UUID) (string, []any) {
	return s.SQL("DELETE FROM {signal} WHERE job_id IN (?)", s.ids(ids))
}

// signalStatements are the signal statements, by golden file name.
func (s *Syntax) signalStatements() map[string]string {
	t := time.Unix(0, 0)
	text := func(q string, _ []any) string { return q }
	w := &spi.Job{Signal: &spi.SignalWait{Name: "n", Key: "k", Deadline: t}}
	return map[string]string{
		"signal_insert_2":     text(s.insertWaits([]*spi.Job{w, w})),
		"signal_read_2":       text(s.readWaits(make([]uuid.UUID, 2))),
		"signal_wake":         text(s.wakeJob(uuid.Nil, "n", true, t)),
		"signal_wake_expired": text(s.wakeJob(uuid.Nil, "", false, t)),
		"signal_resolve":      text(s.resolveWait(uuid.Nil, spi.SignalDelivered, []byte("p"), t)),
		"signal_resolved_job": text(s.resolvedJob(uuid.Nil)),
		"signal_wait_state":   text(s.waitState(uuid.Nil)),
		"signal_by_key":       text(s.keyedWaits("k", "n", 10)),
		"signal_due":          text(s.dueWaits(t, 10)),
		"signal_cancel":       text(s.cancelWait(uuid.Nil, t)),
		"signal_cancel_flow":  text(s.cancelFlowWaits(uuid.Nil, t)),
		"signal_drop_2":       text(s.dropWaits(make([]uuid.UUID, 2))),
	}
}

// fillSignals sets the Signal of each job of jobs that was inserted with a
// wait, read through q in chunks of the dialect's MaxIDs.
func (c Core[T]) fillSignals(ctx context.Context, q Querier, jobs []*spi.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	d, s := &c.cfg.D, &c.cfg.D.Syntax
	byID := make(map[uuid.UUID]*spi.Job, len(jobs))
	ids := make([]uuid.UUID, 0, len(jobs))
	for _, j := range jobs {
		if j != nil {
			byID[j.ID] = j
			ids = append(ids, j.ID)
		}
	}
	_, err := InChunks(ids, d.chunk(), func(ids []uuid.UUID) ([]struct{}, error) {
		query, args := s.readWaits(ids)
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				raw                T
				name, key, outcome sql.NullString
				deadline, resolved any
				payload            []byte
				payloadNull        int64
			)
			if err := rows.Scan(&raw, &name, &key, &deadline, &outcome, &payload, &payloadNull, &resolved); err != nil {
				return nil, Corrupt(d.IDText(raw), "unreadable signal wait: %v", err)
			}
			id, err := d.ParseID(raw)
			if err != nil {
				return nil, err
			}
			j := byID[id]
			if j == nil {
				continue
			}
			w := &spi.SignalWait{Name: name.String, Key: key.String, Outcome: spi.SignalOutcome(outcome.String),
				Payload: Blob(payload, payloadNull != 0)}
			if w.Deadline, err = d.timeOf(deadline); err == nil {
				w.ResolvedAt, err = d.timeOf(resolved)
			}
			if err != nil {
				return nil, Corrupt(id.String(), "unreadable time of its signal wait: %v", err)
			}
			j.Signal = w
		}
		return nil, rows.Err()
	})
	return err
}

// DeliverSignal delivers signal name with payload to job id at now, in one
// transaction: a job WAITING for name becomes PENDING, due at now, its
// wait DELIVERED with the payload. Otherwise nothing is written: an
// unknown job wraps spi.ErrNotFound, a job that is not WAITING, or waits
// for another signal, spi.ErrInvalidState. It implements
// [spi.SignalStore].
func (c Core[T]) DeliverSignal(ctx context.Context, id uuid.UUID, name string, payload []byte, now time.Time) (spi.ResolvedSignal, error) {
	var res spi.ResolvedSignal
	prio := -1
	err := c.do("deliver signal "+name+" to job "+id.String(), func() error {
		return c.inTxAt(ctx, nil, func(tx *sql.Tx, at Attempt) error {
			r, ok, p, err := c.resolve(ctx, tx, at, id, name, true, spi.SignalDelivered, payload, now)
			if err != nil || ok {
				res, prio = r, p
				return err
			}
			return c.notWaiting(ctx, tx, id, name)
		})
	})
	if err != nil {
		return spi.ResolvedSignal{}, err
	}
	c.wake(ctx, prio)
	return res, nil
}

// DeliverSignalByKey delivers signal name with payload, as DeliverSignal,
// to up to limit jobs WAITING for name with key, in id order, each in a
// transaction of its own; it returns those it delivered to (none for the
// empty key). It implements [spi.SignalStore].
func (c Core[T]) DeliverSignalByKey(ctx context.Context, key, name string, payload []byte, now time.Time, limit int) ([]spi.ResolvedSignal, error) {
	if key == "" {
		return []spi.ResolvedSignal{}, nil
	}
	s := &c.cfg.D.Syntax
	out, err := c.resolveEach(ctx, "deliver signal "+name+" by key", limit, func(n int) (string, []any) {
		return s.keyedWaits(key, name, n)
	}, name, true, spi.SignalDelivered, payload, now)
	slices.SortFunc(out, func(a, b spi.ResolvedSignal) int { return bytes.Compare(a.JobID[:], b.JobID[:]) })
	return out, err
}

// ExpireSignals times out at now up to limit WAITING jobs whose deadline
// is not after now, in deadline order, each in a transaction of its own:
// each becomes PENDING, due at now, its wait TIMED_OUT. It implements
// [spi.SignalStore].
func (c Core[T]) ExpireSignals(ctx context.Context, now time.Time, limit int) ([]spi.ResolvedSignal, error) {
	s := &c.cfg.D.Syntax
	return c.resolveEach(ctx, "expire signals", limit, func(n int) (string, []any) {
		return s.dueWaits(now, n)
	}, "", false, spi.SignalTimedOut, nil, now)
}

// resolveEach resolves, each in a transaction of its own, up to limit of
// the waits that candidates (up to n ids) reads, in its order, and returns
// those that applied. A candidate another writer resolved first is passed
// over; the candidates are read again while a round resolved some and
// the limit is not reached.
func (c Core[T]) resolveEach(ctx context.Context, op string, limit int, candidates func(n int) (string, []any),
	name string, byName bool, o spi.SignalOutcome, payload []byte, now time.Time) ([]spi.ResolvedSignal, error) {
	out := []spi.ResolvedSignal{}
	if limit <= 0 {
		return out, nil
	}
	top := -1
	err := c.do(op, func() error {
		for len(out) < limit {
			q, args := candidates(limit - len(out))
			rows, err := c.cfg.DB.QueryContext(ctx, q, args...)
			if err != nil {
				return err
			}
			ids, err := ReadIDs(rows, c.cfg.D.ParseID)
			rows.Close()
			if err != nil || len(ids) == 0 {
				return err
			}
			n := len(out)
			for _, id := range ids {
				var r spi.ResolvedSignal
				var ok bool
				var p int
				if err := c.inTxAt(ctx, nil, func(tx *sql.Tx, at Attempt) (err error) {
					r, ok, p, err = c.resolve(ctx, tx, at, id, name, byName, o, payload, now)
					return err
				}); err != nil {
					return err
				}
				if ok {
					out, top = append(out, r), max(top, p)
				}
			}
			if len(out) == n {
				return nil // every candidate was resolved by another writer
			}
		}
		return nil
	})
	c.wake(ctx, top)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// resolve resolves job id's wait in tx at now with outcome o (a delivery
// or a timeout): the guarded UPDATE of the job (see wakeJob), then of its
// wait. It reports whether it applied, with the job's priority. After a
// COMMIT whose outcome is unknown, a wait that shows exactly this
// resolution counts as applied.
func (c Core[T]) resolve(ctx context.Context, tx *sql.Tx, at Attempt, id uuid.UUID, name string, byName bool,
	o spi.SignalOutcome, payload []byte, now time.Time) (spi.ResolvedSignal, bool, int, error) {
	s := &c.cfg.D.Syntax
	q, args := s.wakeJob(id, name, byName, now)
	ok, err := applied(tx.ExecContext(ctx, q, args...))
	if err != nil {
		return spi.ResolvedSignal{}, false, -1, err
	}
	if ok {
		q, args = s.resolveWait(id, o, payload, now)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return spi.ResolvedSignal{}, false, -1, err
		}
	} else if !at.Uncertain {
		return spi.ResolvedSignal{}, false, -1, nil
	}
	var task, sig sql.NullString
	var prio int
	q, args = s.resolvedJob(id)
	err = tx.QueryRowContext(ctx, q, args...).Scan(&task, &prio, &sig)
	switch {
	case errors.Is(err, sql.ErrNoRows) && !ok:
		return spi.ResolvedSignal{}, false, -1, nil
	case err != nil:
		return spi.ResolvedSignal{}, false, -1, err
	}
	res := spi.ResolvedSignal{JobID: id, TaskName: task.String, Name: sig.String}
	if ok {
		return res, true, prio, nil
	}
	// The run after an uncertain COMMIT: did it apply this resolution?
	st, err := c.waitState(ctx, tx, id)
	if err != nil || !st.found {
		return spi.ResolvedSignal{}, false, -1, err
	}
	mine := st.outcome == o && st.resolved.Equal(now.UTC().Truncate(time.Microsecond)) &&
		bytes.Equal(st.payload, payload) && (!byName || st.name == name)
	return res, mine, prio, nil
}

// wait is what waitState reads.
type wait struct {
	found    bool
	status   string
	name     string
	outcome  spi.SignalOutcome
	payload  []byte
	resolved time.Time
}

// waitState reads the state of job id and its wait in tx.
func (c Core[T]) waitState(ctx context.Context, tx *sql.Tx, id uuid.UUID) (wait, error) {
	var w wait
	var name, outcome sql.NullString
	var resolved any
	q, args := c.cfg.D.Syntax.waitState(id)
	err := tx.QueryRowContext(ctx, q, args...).Scan(&w.status, &name, &outcome, &w.payload, &resolved)
	if errors.Is(err, sql.ErrNoRows) {
		return w, nil
	}
	if err != nil {
		return w, err
	}
	w.found, w.name, w.outcome = true, name.String, spi.SignalOutcome(outcome.String)
	w.resolved, err = c.cfg.D.timeOf(resolved)
	return w, err
}

// notWaiting is the error of a delivery of signal name to job id that did
// not apply: why, as a read in tx finds it.
func (c Core[T]) notWaiting(ctx context.Context, tx *sql.Tx, id uuid.UUID, name string) error {
	w, err := c.waitState(ctx, tx, id)
	switch {
	case err != nil:
		return err
	case !w.found:
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	case w.status != string(spi.StatusWaiting):
		return fmt.Errorf("%w: job %s is %s, not WAITING for a signal", spi.ErrInvalidState, id, w.status)
	case w.name != name:
		return fmt.Errorf("%w: job %s waits for signal %q, not %q", spi.ErrInvalidState, id, w.name, name)
	}
	return fmt.Errorf("%w: job %s is not WAITING for signal %q", spi.ErrInvalidState, id, name)
}

// wake tells the pollers that jobs of priority prio became PENDING (none
// when prio < 0, or without the dialect's Wake).
func (c Core[T]) wake(ctx context.Context, prio int) {
	if prio >= 0 && c.cfg.D.Wake != nil {
		c.cfg.D.Wake(ctx, prio)
	}
}
