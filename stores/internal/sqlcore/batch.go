package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Batches (spi.BatchStore), in the portable SQL of every dialect
// (migration 10). A batch is one row of {batch}; its children are jobs of
// the batch's id (workflow_id), and nothing on the row changes when one of
// them finishes. A chunk is the guarded advance of the row's persisted
// count (it must still be the chunk's offset, the batch open and not
// sealed) and the insert of its children, in one transaction: the row lock
// the advance takes puts two submitters of the same chunk one after the
// other, and the second finds the count moved on. The finisher reads the
// sealed open batches none of whose children is unfinished (a few probes
// of the (workflow_id, status) index each, however large the batch) and
// ends each in a transaction of its own: the guarded UPDATE of the row
// (outcome still NULL) and the insert of the callback job, so that two
// finishers racing for a batch end it once.

const batchColumns = "batch_id, name, created_time, on_success, on_failure, persisted, sealed, outcome, finished_time, callback_id"

// maxJoin is the most children one UPDATE joins to their batch, under
// every protocol's limit on parameters.
const maxJoin = 1000

// failedChildren are the statuses of a finished child that make its
// batch FAILED.
const failedChildren = "('FAILED', 'CANCELLED', 'SKIPPED')"

// keepsBatches is the condition of the archive's candidates j that keeps
// the children of an open batch live, so that its end sees them all.
const keepsBatches = ` AND (j.workflow_id IS NULL OR NOT EXISTS (SELECT 1 FROM {batch} b
		WHERE b.batch_id = j.workflow_id AND b.outcome IS NULL))`

// AddBatchChunk writes a chunk of a batch's children and advances its
// persisted count, in one transaction (see spi.BatchStore). A run again
// after a COMMIT whose outcome is unknown recognizes its own chunk by the
// count and its first child. It implements [spi.BatchStore].
func (c Core[T]) AddBatchChunk(ctx context.Context, ch spi.BatchChunk) (int64, error) {
	op := "add a chunk to batch " + ch.BatchID.String()
	if err := spi.ValidateBatchChunk(ch); err != nil {
		return 0, c.cfg.Fail(op, err)
	}
	if err := c.validateJobs(ch.Children); err != nil {
		return 0, c.cfg.Fail(op, err)
	}
	s := &c.cfg.D.Syntax
	n := ch.Offset + int64(len(ch.Children))
	var create string
	var createArgs []any
	if ch.Create != nil {
		var err error
		if create, createArgs, err = s.createBatch(ch.Create, n, ch.Seal); err != nil {
			return 0, c.cfg.Fail(op, err)
		}
	}
	err := c.do(op, func() error {
		return c.inTxAt(ctx, c.cfg.D.InsertRetryable, func(tx *sql.Tx, at Attempt) error {
			if at.Uncertain {
				if mine, err := c.ownChunk(ctx, tx, ch, n); err != nil || mine {
					return err
				}
			}
			if ch.Create != nil {
				ok, err := applied(tx.ExecContext(ctx, create, createArgs...))
				if err != nil && c.cfg.D.IsDuplicate != nil && c.cfg.D.IsDuplicate(err) {
					ok, err = false, nil
				}
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("batch %s: %w: it exists already", ch.BatchID, spi.ErrInvalidState)
				}
			} else {
				q, args := s.advanceBatch(ch.BatchID, ch.Offset, n, ch.Seal)
				ok, err := applied(tx.ExecContext(ctx, q, args...))
				if err != nil {
					return err
				}
				if !ok {
					return c.chunkRefused(ctx, tx, ch)
				}
			}
			if len(ch.Children) == 0 {
				return nil
			}
			if _, err := c.cfg.D.Insert(ctx, tx, ch.Children, false); err != nil {
				return err
			}
			// The children join the batch: one UPDATE per IN list, not
			// the per-job writes of a workflow's links.
			_, err := InChunks(Conv(ch.Children, jobID), min(c.cfg.D.chunk(), maxJoin), func(ids []uuid.UUID) ([]struct{}, error) {
				q, args := s.joinBatch(ch.BatchID, ids)
				_, err := tx.ExecContext(ctx, q, args...)
				return nil, err
			})
			return err
		})
	})
	if err != nil {
		return 0, err
	}
	if len(ch.Children) > 0 {
		top := spi.PriorityLowest
		for _, j := range ch.Children {
			top = max(top, j.Priority)
		}
		c.wake(ctx, int(top))
	}
	return n, nil
}

// batchRow is what a read of a batch's count and state finds.
type batchRow struct {
	found     bool
	persisted int64
	sealed    bool
	outcome   spi.BatchOutcome
}

// batchState reads the count and state of batch id in tx.
func (c Core[T]) batchState(ctx context.Context, tx *sql.Tx, id uuid.UUID) (batchRow, error) {
	var r batchRow
	var sealed int64
	var outcome sql.NullString
	q, args := c.cfg.D.Syntax.batchState(id)
	err := tx.QueryRowContext(ctx, q, args...).Scan(&r.persisted, &sealed, &outcome)
	if errors.Is(err, sql.ErrNoRows) {
		return r, nil
	}
	r.found, r.sealed, r.outcome = err == nil, sealed != 0, spi.BatchOutcome(outcome.String)
	return r, err
}

// chunkRefused is the error of a chunk whose advance did not apply: why,
// as a read in tx finds the batch.
func (c Core[T]) chunkRefused(ctx context.Context, tx *sql.Tx, ch spi.BatchChunk) error {
	r, err := c.batchState(ctx, tx, ch.BatchID)
	switch {
	case err != nil:
		return err
	case !r.found:
		return fmt.Errorf("batch %s: %w", ch.BatchID, spi.ErrNotFound)
	case r.outcome != "":
		return fmt.Errorf("batch %s: %w: it ended %s", ch.BatchID, spi.ErrInvalidState, r.outcome)
	case r.sealed:
		return fmt.Errorf("batch %s: %w: it is sealed", ch.BatchID, spi.ErrInvalidState)
	}
	return fmt.Errorf("batch %s at offset %d, persisted %d: %w", ch.BatchID, ch.Offset, r.persisted, spi.ErrBatchOffset)
}

// ownChunk tells, after a COMMIT whose outcome is unknown, whether that
// COMMIT wrote ch: the batch's count is n, sealed as ch says, and ch's
// first child exists.
func (c Core[T]) ownChunk(ctx context.Context, tx *sql.Tx, ch spi.BatchChunk, n int64) (bool, error) {
	r, err := c.batchState(ctx, tx, ch.BatchID)
	if err != nil || !r.found || r.persisted != n || (ch.Seal && !r.sealed) {
		return false, err
	}
	if len(ch.Children) == 0 {
		return true, nil
	}
	got, err := c.cfg.D.LoadJobs(ctx, tx, []uuid.UUID{ch.Children[0].ID})
	return err == nil && len(got) == 1, err
}

// GetBatch returns batch id. It implements [spi.BatchStore].
func (c Core[T]) GetBatch(ctx context.Context, id uuid.UUID) (*spi.Batch, error) {
	q, args := c.cfg.D.Syntax.getBatch(id)
	got, err := queryAll(ctx, c, "get batch "+id.String(), q, args, c.scanBatch)
	if err != nil {
		return nil, err
	}
	if len(got) == 0 {
		return nil, c.cfg.Fail("get batch "+id.String(), fmt.Errorf("batch %s: %w", id, spi.ErrNotFound))
	}
	return got[0], nil
}

// scanBatch reads a row of batchColumns.
func (c Core[T]) scanBatch(rows *sql.Rows) (*spi.Batch, error) {
	var (
		raw               T
		name, outcome     sql.NullString
		created, finished any
		onSuccess, onFail []byte
		persisted, sealed int64
		callback          sql.Null[T]
		b                 spi.Batch
		err               error
	)
	if err := rows.Scan(&raw, &name, &created, &onSuccess, &onFail, &persisted, &sealed, &outcome, &finished, &callback); err != nil {
		return nil, fmt.Errorf("%w: unreadable batch row: %v", spi.ErrCorruptJob, err)
	}
	if b.ID, err = c.cfg.D.ParseID(raw); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: batch %s: %s", spi.ErrCorruptJob, b.ID, fmt.Sprintf(format, args...))
	}
	b.Name, b.Persisted, b.Sealed, b.Outcome = name.String, persisted, sealed != 0, spi.BatchOutcome(outcome.String)
	if b.CreatedAt, err = c.cfg.D.timeOf(created); err == nil {
		b.FinishedAt, err = c.cfg.D.timeOf(finished)
	}
	if err != nil {
		return nil, bad("unreadable time: %v", err)
	}
	if b.OnSuccess, err = spi.DecodeBatchCallback(onSuccess); err == nil {
		b.OnFailure, err = spi.DecodeBatchCallback(onFail)
	}
	if err != nil {
		return nil, bad("%v", err)
	}
	if callback.Valid {
		if b.CallbackID, err = c.cfg.D.ParseID(callback.V); err != nil {
			return nil, bad("unreadable callback id: %v", err)
		}
	}
	return &b, nil
}

// CountBatch counts the live children of batch id by status. It
// implements [spi.BatchStore].
func (c Core[T]) CountBatch(ctx context.Context, id uuid.UUID) (map[spi.Status]int, error) {
	s := &c.cfg.D.Syntax
	out := map[spi.Status]int{}
	err := c.do("count batch "+id.String(), func() error {
		q, args := s.batchState(id)
		var persisted, sealed int64
		var outcome sql.NullString
		err := c.cfg.DB.QueryRowContext(ctx, q, args...).Scan(&persisted, &sealed, &outcome)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("batch %s: %w", id, spi.ErrNotFound)
		}
		if err != nil {
			return err
		}
		q, args = s.countBatch(id)
		rows, err := c.cfg.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		counts, err := ReadCounts(rows)
		for st, n := range counts {
			out[spi.Status(st)] = int(n)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CancelBatch ends open batch id CANCELLED at now and cancels its
// unfinished children (as CancelWorkflow does), in one transaction. It
// implements [spi.BatchStore].
func (c Core[T]) CancelBatch(ctx context.Context, id uuid.UUID, now time.Time) (int, error) {
	s := &c.cfg.D.Syntax
	n, aborted := 0, false
	err := c.do("cancel batch "+id.String(), func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			q, args := s.cancelBatch(id, now)
			ok, err := applied(tx.ExecContext(ctx, q, args...))
			if err != nil {
				return err
			}
			if !ok {
				r, err := c.batchState(ctx, tx, id)
				switch {
				case err != nil:
					return err
				case !r.found:
					return fmt.Errorf("batch %s: %w", id, spi.ErrNotFound)
				case r.outcome != spi.BatchCancelled:
					return fmt.Errorf("batch %s: %w: it ended %s", id, spi.ErrInvalidState, r.outcome)
				}
			}
			n, aborted, err = c.cancelFlow(ctx, tx, id, now)
			return err
		})
	})
	if err == nil {
		c.afterCancel(ctx, cancelled{aborted: aborted})
	}
	return n, err
}

// finishable is a batch the finisher found ready to end.
type finishable struct {
	id                   uuid.UUID
	name                 string
	onSuccess, onFailure []byte
}

// FinishBatches ends at now up to limit sealed open batches whose
// children have all finished, each in a transaction of its own (see the
// comment at the top of this file), and returns those it ended. A batch
// whose stored callback is unreadable is not ended, and named in the
// error, after the others are. It implements [spi.BatchStore].
func (c Core[T]) FinishBatches(ctx context.Context, now time.Time, limit int) ([]spi.FinishedBatch, error) {
	s := &c.cfg.D.Syntax
	out := []spi.FinishedBatch{}
	if limit <= 0 {
		return out, nil
	}
	var bad []error
	skip := map[uuid.UUID]bool{}
	top := -1
	err := c.do("finish batches", func() error {
		for len(out) < limit {
			q, args := s.finishable(limit - len(out) + len(skip))
			cands, err := queryRows(ctx, c.cfg.DB, q, args, func(rows *sql.Rows) (finishable, error) {
				var f finishable
				var raw T
				var name sql.NullString
				if err := rows.Scan(&raw, &name, &f.onSuccess, &f.onFailure); err != nil {
					return f, err
				}
				f.name = name.String
				var err error
				f.id, err = c.cfg.D.ParseID(raw)
				return f, err
			})
			if err != nil {
				return err
			}
			n := len(out)
			for _, f := range cands {
				if skip[f.id] || len(out) >= limit {
					continue
				}
				fb, ok, err := c.finishBatch(ctx, f, now)
				switch {
				case errors.Is(err, spi.ErrCorruptJob):
					bad, skip[f.id] = append(bad, err), true
				case err != nil:
					return err
				case ok:
					out = append(out, fb)
					if fb.Callback != nil {
						top = max(top, int(fb.Callback.Priority))
					}
				}
			}
			if len(out) == n {
				return nil // every candidate was ended by another finisher, or is unreadable
			}
		}
		return nil
	})
	c.wake(ctx, top)
	if err == nil && len(bad) > 0 {
		err = c.cfg.Fail("finish batches", errors.Join(bad...))
	}
	return out, err
}

// finishBatch ends batch f at now if it is still open and none of its
// children is unfinished, inserting its callback; it reports whether it
// did.
func (c Core[T]) finishBatch(ctx context.Context, f finishable, now time.Time) (spi.FinishedBatch, bool, error) {
	s := &c.cfg.D.Syntax
	var fb spi.FinishedBatch
	var ok bool
	err := c.inTxAt(ctx, c.cfg.D.InsertRetryable, func(tx *sql.Tx, at Attempt) error {
		fb, ok = spi.FinishedBatch{ID: f.id, Name: f.name}, false
		// Read again in the transaction: a DLQ retry may have made a
		// child PENDING since the candidates were read.
		if open, err := c.anyChild(ctx, tx, f.id, blocking); err != nil || open {
			return err
		}
		failed, err := c.anyChild(ctx, tx, f.id, failedChildren)
		if err != nil {
			return err
		}
		fb.Outcome = spi.BatchOutcomeOf(!failed)
		raw := f.onSuccess
		if failed {
			raw = f.onFailure
		}
		cb, err := spi.DecodeBatchCallback(raw)
		if err != nil {
			return fmt.Errorf("batch %s: %w", f.id, err)
		}
		if cb != nil {
			fb.Callback = spi.BatchCallbackJob(cb, now)
		}
		q, args := s.endBatch(f.id, fb.Outcome, now, fb.Callback)
		if ok, err = applied(tx.ExecContext(ctx, q, args...)); err != nil || !ok {
			return err // not ok: another finisher, or a cancel, ended it first
		}
		if fb.Callback == nil {
			return nil
		}
		jobs := []*spi.Job{fb.Callback}
		if err := c.validateJobs(jobs); err != nil {
			return fmt.Errorf("%w: batch %s: callback: %v", spi.ErrCorruptJob, f.id, err)
		}
		_, err = c.cfg.D.Insert(ctx, tx, jobs, at.Uncertain)
		return err
	})
	return fb, ok && err == nil, err
}

// anyChild reports whether batch id has a child of one of statuses (an
// IN list of literals).
func (c Core[T]) anyChild(ctx context.Context, tx *sql.Tx, id uuid.UUID, statuses string) (bool, error) {
	q, args := c.cfg.D.Syntax.childOf(id, statuses)
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	found := rows.Next()
	return found, rows.Err()
}

// The batch statements, in the syntax of a dialect.

// createBatch inserts batch b with count n, sealed or not.
func (s *Syntax) createBatch(b *spi.Batch, n int64, sealed bool) (string, []any, error) {
	onSuccess, err := spi.EncodeBatchCallback(b.OnSuccess)
	if err != nil {
		return "", nil, err
	}
	onFailure, err := spi.EncodeBatchCallback(b.OnFailure)
	if err != nil {
		return "", nil, err
	}
	q, args := s.SQL(`INSERT INTO {batch} (batch_id, name, created_time, on_success, on_failure, persisted, sealed)
	VALUES (?, ?, ?, ?, ?, ?, ?)`, s.id(b.ID), s.nullName(b.Name), s.time(b.CreatedAt), s.blob(onSuccess), s.blob(onFailure), n, flag(sealed))
	if s.OnConflict {
		q += "\n\tON CONFLICT (batch_id) DO NOTHING"
	}
	return q, args, nil
}

// advanceBatch moves the count of open, unsealed batch id from offset to
// n, sealing it when sealed.
func (s *Syntax) advanceBatch(id uuid.UUID, offset, n int64, sealed bool) (string, []any) {
	return s.SQL(`UPDATE {batch} SET persisted = ?, sealed = ?
	WHERE batch_id = ? AND persisted = ? AND sealed = 0 AND outcome IS NULL`, n, flag(sealed), s.id(id), offset)
}

// joinBatch makes the jobs of ids children of batch id.
func (s *Syntax) joinBatch(id uuid.UUID, ids []uuid.UUID) (string, []any) {
	return s.SQL("UPDATE {job} SET workflow_id = ? WHERE job_id IN (?)", s.id(id), s.ids(ids))
}

// batchState reads (persisted, sealed, outcome) of batch id.
func (s *Syntax) batchState(id uuid.UUID) (string, []any) {
	return s.SQL("SELECT persisted, sealed, outcome FROM {batch} WHERE batch_id = ?", s.id(id))
}

func (s *Syntax) getBatch(id uuid.UUID) (string, []any) {
	return s.SQL("SELECT "+batchColumns+" FROM {batch} WHERE batch_id = ?", s.id(id))
}

// batchStatus is the column of a child's status (see Syntax.BatchStatus).
func (s *Syntax) batchStatus() string { return orStatus(s.BatchStatus) }

// resourceStatus is the column of a job's status that the counts of a
// resource's holders test (see Syntax.ResourceStatus).
func (s *Syntax) resourceStatus() string { return orStatus(s.ResourceStatus) }

// orStatus is col, a dialect's stand-in for status in one index, or
// status when the dialect has none.
func orStatus(col string) string {
	if col != "" {
		return col
	}
	return "status"
}

// countBatch reads (status, count) of the live children of batch id.
func (s *Syntax) countBatch(id uuid.UUID) (string, []any) {
	c := s.batchStatus()
	return s.SQL("SELECT "+c+", COUNT(*) FROM {job} WHERE workflow_id = ? GROUP BY "+c, s.id(id))
}

// cancelBatch ends open batch id CANCELLED at now, sealed.
func (s *Syntax) cancelBatch(id uuid.UUID, now time.Time) (string, []any) {
	return s.SQL("UPDATE {batch} SET outcome = 'CANCELLED', finished_time = ?, sealed = 1 WHERE batch_id = ? AND outcome IS NULL",
		s.time(now), s.id(id))
}

// finishable reads (batch_id, name, on_success, on_failure) of up to
// limit sealed open batches none of whose children is unfinished, in id
// order.
func (s *Syntax) finishable(limit int) (string, []any) {
	return s.limited(`SELECT b.batch_id, b.name, b.on_success, b.on_failure FROM {batch} b
	WHERE b.outcome IS NULL AND b.sealed = 1
		AND NOT EXISTS (SELECT 1 FROM {job} j WHERE j.workflow_id = b.batch_id AND j.`+s.batchStatus()+` IN `+blocking+`)
	ORDER BY b.batch_id`, int64(limit))
}

// childOf reads one child of batch id whose status is one of statuses.
func (s *Syntax) childOf(id uuid.UUID, statuses string) (string, []any) {
	return s.limited("SELECT j.job_id FROM {job} j WHERE j.workflow_id = ? AND j."+s.batchStatus()+" IN "+statuses, 1, s.id(id))
}

// endBatch ends open sealed batch id with outcome o at now, recording
// callback's id (NULL for none).
func (s *Syntax) endBatch(id uuid.UUID, o spi.BatchOutcome, now time.Time, callback *spi.Job) (string, []any) {
	set, args := "callback_id = NULL", []any{s.time(now)}
	if callback != nil {
		set, args = "callback_id = ?", append(args, s.id(callback.ID))
	}
	return s.SQL("UPDATE {batch} SET outcome = '"+string(o)+"', finished_time = ?, "+set+
		"\n\tWHERE batch_id = ? AND outcome IS NULL AND sealed = 1", append(args, s.id(id))...)
}

// batchStatements are the batch statements, by golden file name.
func (s *Syntax) batchStatements() map[string]string {
	t := time.Unix(0, 0)
	text := func(q string, _ []any) string { return q }
	create, _, _ := s.createBatch(&spi.Batch{Name: "b", CreatedAt: t}, 0, false)
	return map[string]string{
		"batch_create":     create,
		"batch_advance":    text(s.advanceBatch(uuid.Nil, 0, 1, true)),
		"batch_join_2":     text(s.joinBatch(uuid.Nil, make([]uuid.UUID, 2))),
		"batch_state":      text(s.batchState(uuid.Nil)),
		"batch_get":        text(s.getBatch(uuid.Nil)),
		"batch_count":      text(s.countBatch(uuid.Nil)),
		"batch_cancel":     text(s.cancelBatch(uuid.Nil, t)),
		"batch_finishable": text(s.finishable(10)),
		"batch_child":      text(s.childOf(uuid.Nil, blocking)),
		"batch_end":        text(s.endBatch(uuid.Nil, spi.BatchSucceeded, t, &spi.Job{})),
		"batch_end_none":   text(s.endBatch(uuid.Nil, spi.BatchFailed, t, nil)),
	}
}
