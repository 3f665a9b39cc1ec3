package sqlcore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Bulk retry and cancel (spi.BulkManager): one transaction per call, the
// ids read and locked in chunks of the dialect's MaxIDs. The common case,
// a FAILED job with no dependents to revive or a PENDING job with no
// dependents, is one set-based UPDATE per chunk. A job with workflow or
// signal side effects takes the single-job statements (those of
// RetryFailedJob and CancelJob) inside the same transaction, in the
// callers' order, so that each job ends as the single-job calls, made one
// after the other, would leave it.

// RetryFailedJobs moves the FAILED jobs of ids back to PENDING as
// RetryFailedJob does (due at now, error cleared, attempts and crash count
// zero, finish time and owner cleared, the dependents that the failure
// cancelled or skipped waiting for it again), in one transaction, and
// returns for each id whether it retried it. A chunk whose jobs have no
// dependents to revive is one UPDATE; a chunk with one takes
// RetryFailedJob's statements for each job, in order (a revive may block a
// child that the same call retries). It implements [spi.BulkManager].
func (c Core[T]) RetryFailedJobs(ctx context.Context, ids []uuid.UUID, now time.Time) ([]bool, error) {
	if len(ids) > spi.MaxBulkIDs {
		return nil, fmt.Errorf("retry %d jobs: at most %d ids a call (spi.MaxBulkIDs)", len(ids), spi.MaxBulkIDs)
	}
	s, d := &c.cfg.D.Syntax, &c.cfg.D
	done := map[uuid.UUID]bool{}
	top := -1
	err := c.do("retry jobs", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			clear(done)
			top = -1
			_, err := InChunks(distinct(ids), d.chunk(), func(chunk []uuid.UUID) ([]struct{}, error) {
				q, args := s.lockFailed(chunk)
				locked, err := c.readIDs(ctx, tx, q, args)
				if err != nil || len(locked) == 0 {
					return nil, err
				}
				q, args = s.revivable(locked)
				parents, err := c.readIDs(ctx, tx, q, args)
				if err != nil {
					return nil, err
				}
				if len(parents) == 0 {
					q, args = s.retryFailed(locked, now, c.returning())
					n, p, err := c.write(ctx, tx, q, args)
					if err != nil {
						return nil, err
					}
					if n != int64(len(locked)) {
						return nil, fmt.Errorf("retried %d of the %d FAILED jobs locked", n, len(locked))
					}
					top = max(top, p)
					for _, id := range locked {
						done[id] = true
					}
					return nil, nil
				}
				for _, id := range chunk {
					q, args := d.RetryFailedSQL(id, now)
					n, p, err := c.write(ctx, tx, q, args)
					if err != nil {
						return nil, err
					}
					if n == 0 {
						continue
					}
					top = max(top, p)
					done[id] = true
					if err := c.revive(ctx, tx, id); err != nil {
						return nil, err
					}
				}
				return nil, nil
			})
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	if top >= 0 && d.Wake != nil {
		d.Wake(ctx, top)
	}
	return answers(ids, done), nil
}

// CancelJobs cancels the PENDING, BLOCKED, WAITING and RUNNING jobs of
// ids as CancelJob does (CANCELLED, finished at now; a WAITING job's wait
// ends CANCELLED; a RUNNING job's claim ends; the dependents follow their
// cancel policy), in one
// transaction, and returns for each id whether it cancelled it. The
// PENDING jobs without dependents of a chunk are one UPDATE (nothing else
// changes them, and they change nothing else); the others take
// CancelJob's statements, one job after the other in the callers' order
// (cancelling a parent may release a child that the same call cancels
// next). It implements [spi.BulkManager].
func (c Core[T]) CancelJobs(ctx context.Context, ids []uuid.UUID, now time.Time) ([]bool, error) {
	if len(ids) > spi.MaxBulkIDs {
		return nil, fmt.Errorf("cancel %d jobs: at most %d ids a call (spi.MaxBulkIDs)", len(ids), spi.MaxBulkIDs)
	}
	s, d := &c.cfg.D.Syntax, &c.cfg.D
	done := map[uuid.UUID]bool{}
	var all cancelled
	err := c.do("cancel jobs", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			clear(done)
			all = cancelled{}
			_, err := InChunks(distinct(ids), d.chunk(), func(chunk []uuid.UUID) ([]struct{}, error) {
				type cand struct {
					id     uuid.UUID
					status string
					kids   int64
				}
				q, args := s.lockCancellable(chunk)
				cands, err := queryRows(ctx, tx, q, args, func(rows *sql.Rows) (cand, error) {
					var k cand
					var raw T
					if err := rows.Scan(&raw, &k.status, &k.kids); err != nil {
						return k, err
					}
					id, err := d.ParseID(raw)
					k.id = id
					return k, err
				})
				if err != nil || len(cands) == 0 {
					return nil, err
				}
				var simple []uuid.UUID
				complex := map[uuid.UUID]bool{}
				for _, k := range cands {
					if spi.Status(k.status) == spi.StatusPending && k.kids == 0 {
						simple = append(simple, k.id)
					} else {
						complex[k.id] = true
					}
				}
				if len(simple) > 0 {
					q, args := s.cancelPending(simple, now)
					n, err := applied64(tx.ExecContext(ctx, q, args...))
					if err != nil {
						return nil, err
					}
					if n != int64(len(simple)) {
						return nil, fmt.Errorf("cancelled %d of the %d PENDING jobs locked", n, len(simple))
					}
					for _, id := range simple {
						done[id] = true
					}
				}
				for _, id := range chunk {
					if !complex[id] {
						continue
					}
					res, err := c.cancelOne(ctx, tx, id, now)
					if err != nil {
						return nil, err
					}
					done[id] = res.ok
					all.released, all.aborted = all.released || res.released, all.aborted || res.aborted
				}
				return nil, nil
			})
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	c.afterCancel(ctx, all)
	return answers(ids, done), nil
}

// cancelled is what cancelling one job did: whether it cancelled it,
// whether it ended a RUNNING job's claim, and whether that released a
// dependent.
type cancelled struct{ ok, aborted, released bool }

// cancelOne runs CancelJob's statements for job id in tx.
func (c Core[T]) cancelOne(ctx context.Context, tx *sql.Tx, id uuid.UUID, now time.Time) (cancelled, error) {
	var res cancelled
	q, args := c.cfg.D.CancelSQL(id, now)
	n, _, err := c.write(ctx, tx, q, args)
	if err == nil && n == 0 {
		err = c.recordRuns(ctx, tx, []uuid.UUID{id}, spi.AttemptCancelled, now)
	}
	if err == nil && n == 0 {
		q, args = c.cfg.D.AbortSQL(id, now)
		n, _, err = c.write(ctx, tx, q, args)
		res.aborted = n > 0
	}
	if err != nil || n == 0 {
		return cancelled{}, err
	}
	handed := false
	if !res.aborted {
		// A job that waited on its sequence's link leaves the sequence.
		if handed, err = c.cfg.D.leaveSequence(ctx, tx, id, now); err != nil {
			return cancelled{}, err
		}
		// Only a job that was WAITING has an unresolved wait.
		q, args = c.cfg.D.Syntax.cancelWait(id, now)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return cancelled{}, err
		}
	}
	res.released, err = c.finishWithDependents(ctx, tx, []uuid.UUID{id}, spi.StatusCancelled, now)
	res.released = res.released || handed
	res.ok = err == nil
	return res, err
}

// afterCancel tells, once a cancel committed, the pollers of the jobs it
// released and the nodes of the claims it ended.
func (c Core[T]) afterCancel(ctx context.Context, res cancelled) {
	if res.released && c.cfg.D.Wake != nil {
		c.cfg.D.Wake(ctx, int(spi.PriorityNormal))
	}
	if res.aborted && c.cfg.D.ClaimsChanged != nil {
		c.cfg.D.ClaimsChanged(ctx)
	}
}

// lockFailed reads and locks the FAILED jobs among ids.
func (s *Syntax) lockFailed(ids []uuid.UUID) (string, []any) {
	return s.SQL("SELECT job_id FROM {job}"+s.LockHint+" WHERE status = 'FAILED' AND job_id IN (?) ORDER BY job_id"+s.LockOn, s.ids(ids))
}

// revivable reads those of ids that have dependents to revive: dependency
// rows that carry their state.
func (s *Syntax) revivable(ids []uuid.UUID) (string, []any) {
	return s.SQL("SELECT DISTINCT parent_id FROM {dep} WHERE parent_status IS NOT NULL AND parent_id IN (?)", s.ids(ids))
}

// retryFailed is RetryFailedSQL for the jobs of ids, with the returning
// clause of a dialect with Wake.
func (s *Syntax) retryFailed(ids []uuid.UUID, now time.Time, returning string) (string, []any) {
	return s.Update(spi.Retried(now), "job_id IN (?)"+returning, s.ids(ids))
}

// lockCancellable reads and locks (id, status, dep_children) of the
// PENDING, BLOCKED, WAITING and RUNNING jobs among ids.
func (s *Syntax) lockCancellable(ids []uuid.UUID) (string, []any) {
	return s.SQL("SELECT job_id, status, dep_children FROM {job}"+s.LockHint+
		" WHERE status IN ('PENDING', 'BLOCKED', 'WAITING', 'RUNNING') AND job_id IN (?) ORDER BY job_id"+s.LockOn, s.ids(ids))
}

// cancelPending cancels the PENDING jobs of ids, finished at now.
func (s *Syntax) cancelPending(ids []uuid.UUID, now time.Time) (string, []any) {
	ch := spi.Cancelled(now)
	ch.From = []spi.Status{spi.StatusPending}
	return s.Update(ch, "job_id IN (?)", s.ids(ids))
}

// bulkStatements are the bulk statements, by golden file name.
func (s *Syntax) bulkStatements() map[string]string {
	t := time.Unix(0, 0)
	text := func(q string, _ []any) string { return q }
	two := make([]uuid.UUID, 2)
	return map[string]string{
		"bulk_lock_failed":      text(s.lockFailed(two)),
		"bulk_revivable":        text(s.revivable(two)),
		"bulk_retry_2":          text(s.retryFailed(two, t, "")),
		"bulk_lock_cancellable": text(s.lockCancellable(two)),
		"bulk_cancel_2":         text(s.cancelPending(two, t)),
	}
}

// returning is the clause by which, with the dialect's Wake, a write that
// makes jobs PENDING returns their priorities (see write).
func (c Core[T]) returning() string {
	if c.cfg.D.Wake != nil {
		return "\n\tRETURNING priority"
	}
	return ""
}

// applied64 is the count of rows an Exec changed.
func applied64(r sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// distinct returns ids without repetitions, in the order of their first
// occurrence.
func distinct(ids []uuid.UUID) []uuid.UUID {
	seen := make(map[uuid.UUID]bool, len(ids))
	out := make([]uuid.UUID, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// answers is, for each of ids in order, whether done holds it.
func answers(ids []uuid.UUID, done map[uuid.UUID]bool) []bool {
	out := make([]bool, len(ids))
	for i, id := range ids {
		out[i] = done[id]
	}
	return out
}
