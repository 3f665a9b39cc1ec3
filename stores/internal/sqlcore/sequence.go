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

// FIFO sequences (spi.SequenceStore) are chains of dependencies: each job
// of a key waits, BLOCKED, on one dependency (allow_mask
// spi.SequenceAllow) on the job of the key inserted before it, and the
// workflows' finish (workflow.go) releases it. The key's row in {unique}
// (under spi.SequenceKeyPrefix) names the key's last job, its tail. An
// insert of sequenced jobs, per key in key order, in its transaction:
//
//  1. makes sure the key's row exists and locks it (as a unique key's),
//     so that inserts of a key take turns;
//  2. reads the tail's status with the tail's row lock: a finish of the
//     tail (which updates that row first) is then either committed, and
//     seen, or waits for the insert to commit, and then sees the new
//     dependency in its release (a statement after its own update);
//  3. walks back from a tail that was cancelled while it waited (its link
//     never finished) to the job that tail waited for;
//  4. writes each new job's link when the tail has not finished (or
//     failed, for a job that holds on failure), and makes the job the
//     tail.
//
// Every job of a sequence counts one dependent (dep_children = 1), so
// that every write that finishes it goes through finish.

// RowTx is what the sequence link needs of a transaction: a statement,
// and a read of one row (sql.ErrNoRows when there is none). SQLRowTx
// adapts a database/sql one; a store with its own driver adapts its own.
type RowTx interface {
	Exec(ctx context.Context, query string, args ...any) error
	Scan(ctx context.Context, query string, args []any, dest ...any) error
}

// SQLRowTx adapts q to RowTx.
func SQLRowTx(q DBTX) RowTx { return sqlRowTx{q} }

type sqlRowTx struct{ q DBTX }

func (t sqlRowTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := t.q.ExecContext(ctx, query, args...)
	return err
}

func (t sqlRowTx) Scan(ctx context.Context, query string, args []any, dest ...any) error {
	return t.q.QueryRowContext(ctx, query, args...).Scan(dest...)
}

// maxSequenceWalk bounds step 3: a tail reached through more cancelled
// jobs than this is taken as it is (it has finished, so the new job does
// not wait on it).
const maxSequenceWalk = 1000

// LinkSequences links the jobs of written, just inserted as PENDING in
// the transaction q, that carry a sequence or fairness key (steps 1 to
// 4): it reads and locks key after key, then writes the links of the
// whole batch in a few multi-row statements.
func (d Dialect[T]) LinkSequences(ctx context.Context, q RowTx, written []*spi.Job) error {
	order := spi.SequenceOrder(written)
	if len(order) == 0 {
		return nil
	}
	s := &d.Syntax
	var deps []depRow
	var blocked, free []uuid.UUID
	for n := 0; n < len(order); {
		key := written[order[n]].Sequence.Key
		tail, status, err := d.sequenceTail(ctx, q, key)
		if err != nil {
			return err
		}
		for ; n < len(order) && written[order[n]].Sequence.Key == key; n++ {
			j := written[order[n]]
			if tail != uuid.Nil && j.Sequence.Links(status) {
				deps = append(deps, depRow{child: j.ID, dep: spi.Dependency{ParentID: tail, Allow: j.Sequence.Allow()}})
				blocked, status = append(blocked, j.ID), spi.StatusBlocked
			} else {
				free, status = append(free, j.ID), spi.StatusPending
			}
			tail = j.ID
		}
		query, args := s.SQL("UPDATE {unique} SET job_id = ?, until_time = NULL WHERE unique_key = ?", s.id(tail), s.name(key))
		if err := q.Exec(ctx, query, args...); err != nil {
			return fmt.Errorf("make job %s the tail of sequence %q: %w", tail, key, err)
		}
	}
	// Every job of a key counts its successor, present or to come.
	for _, w := range []struct {
		ids []uuid.UUID
		set string
	}{{blocked, "status = 'BLOCKED', dep_count = 1, dep_waiting = 1, dep_children = 1"}, {free, "dep_children = 1"}} {
		if _, err := InChunks(w.ids, d.chunk(), func(ids []uuid.UUID) ([]struct{}, error) {
			query, args := s.SQL("UPDATE {job} SET "+w.set+" WHERE job_id IN (?)", s.ids(ids))
			return nil, q.Exec(ctx, query, args...)
		}); err != nil {
			return fmt.Errorf("link %d jobs of sequences: %w", len(w.ids), err)
		}
	}
	for _, st := range d.depInserts(deps) {
		if err := q.Exec(ctx, st.SQL, st.Args...); err != nil {
			return fmt.Errorf("link %d jobs of sequences: %w", len(deps), err)
		}
	}
	return nil
}

// sequenceTail makes sure the row of sequence key exists and locks it,
// then reads, with its row's lock, the job the key's next job waits on
// and its status (steps 1 to 3): the zero id when there is none.
func (d Dialect[T]) sequenceTail(ctx context.Context, q RowTx, key string) (uuid.UUID, spi.Status, error) {
	s := &d.Syntax
	reserve := s.UniqueReserve
	if reserve == "" {
		reserve = "INSERT INTO {unique} (unique_key) VALUES (?) ON CONFLICT (unique_key) DO NOTHING"
	}
	query, args := s.SQL(reserve, s.name(key))
	if err := q.Exec(ctx, query, args...); err != nil && (d.IsDuplicate == nil || !d.IsDuplicate(err)) {
		return uuid.Nil, "", fmt.Errorf("reserve sequence %q: %w", key, err)
	}
	query, args = s.SQL("SELECT job_id FROM {unique}"+s.LockHint+" WHERE unique_key = ?"+s.LockOn, s.name(key))
	var raw sql.Null[T]
	switch err := q.Scan(ctx, query, args, &raw); {
	case errors.Is(err, sql.ErrNoRows):
		return uuid.Nil, "", nil
	case err != nil:
		return uuid.Nil, "", fmt.Errorf("read sequence %q: %w", key, err)
	case !raw.Valid:
		return uuid.Nil, "", nil
	}
	tail, err := d.ParseID(raw.V)
	if err != nil {
		return uuid.Nil, "", fmt.Errorf("sequence %q: %w", key, err)
	}
	for range maxSequenceWalk {
		status, err := d.lockedStatus(ctx, q, tail)
		if err != nil || status != spi.StatusCancelled {
			return tail, status, err
		}
		before, err := d.waitedOn(ctx, q, tail)
		if err != nil || before == uuid.Nil {
			return tail, status, err
		}
		tail = before
	}
	return tail, spi.StatusCancelled, nil
}

// lockedStatus reads the status of job id with its row's lock; empty for
// a job that no longer exists.
func (d Dialect[T]) lockedStatus(ctx context.Context, q RowTx, id uuid.UUID) (spi.Status, error) {
	s := &d.Syntax
	query, args := s.SQL("SELECT status FROM {job}"+s.LockHint+" WHERE job_id = ?"+s.LockOn, s.id(id))
	var status string
	switch err := q.Scan(ctx, query, args, &status); {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read the status of job %s: %w", id, err)
	}
	return spi.Status(status), nil
}

// waitedOn returns the job that id waits on through its sequence's link,
// when that link has not finished; the zero id otherwise.
func (d Dialect[T]) waitedOn(ctx context.Context, q RowTx, id uuid.UUID) (uuid.UUID, error) {
	s := &d.Syntax
	query, args := s.SQL("SELECT parent_id FROM {dep} WHERE child_id = ? AND parent_status IS NULL AND allow_mask >= ?",
		s.id(id), int64(spi.AllowSequence))
	var raw T
	switch err := q.Scan(ctx, query, args, &raw); {
	case errors.Is(err, sql.ErrNoRows):
		return uuid.Nil, nil
	case err != nil:
		return uuid.Nil, fmt.Errorf("read what job %s waits on: %w", id, err)
	}
	return d.ParseID(raw)
}

// leaveSequence follows the write of a cancel of a job id that was not
// RUNNING, in its transaction tx: when id waited on its sequence's link
// (it was BLOCKED: the link of a job that ran has finished), its
// successor's link moves to the job id waits on (locked first, so that a finish of
// that job either committed and is seen, or waits and then sees the
// moved link), and is finished at once when that job failed and the
// successor does not hold on failure. It reports whether it released the
// successor.
func (d Dialect[T]) leaveSequence(ctx context.Context, tx *sql.Tx, id uuid.UUID, now time.Time) (bool, error) {
	q := SQLRowTx(tx)
	before, err := d.waitedOn(ctx, q, id)
	if err != nil || before == uuid.Nil {
		return false, err
	}
	status, err := d.lockedStatus(ctx, q, before)
	if err != nil {
		return false, err
	}
	s := &d.Syntax
	query, args := s.SQL("UPDATE {dep} SET parent_id = ? WHERE parent_id = ? AND parent_status IS NULL AND allow_mask >= ?",
		s.id(before), s.id(id), int64(spi.AllowSequence))
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return false, fmt.Errorf("hand the successor of job %s to %s: %w", id, before, err)
	}
	if !status.Terminal() {
		return false, nil
	}
	return d.finish(ctx, tx, []finished{{before, status}}, now)
}

// PassTurns lets go, in tx, the successors of the fairness keys' jobs of
// claimed, just claimed at now (spi.FairShareStore): the links of Allow
// TurnAllow on them record TurnPassed, and each child whose last link
// that was becomes PENDING, due at the later of its due time and now. It
// reads nothing when no job of claimed has dependents.
func (d Dialect[T]) PassTurns(ctx context.Context, tx DBTX, claimed []*spi.Job, now time.Time) error {
	var parents []uuid.UUID
	for _, j := range claimed {
		if j.Dependents > 0 {
			parents = append(parents, j.ID)
		}
	}
	turn := " AND allow_mask >= ? AND allow_mask < ?"
	turnArgs := []any{int64(spi.AllowTurn), int64(spi.HoldOnFailure)}
	_, err := InChunks(parents, d.chunk()/2, func(ids []uuid.UUID) ([]struct{}, error) {
		_, err := d.resolveLinks(ctx, tx, ids, spi.TurnPassed, turn, turnArgs, now)
		if err != nil {
			return nil, fmt.Errorf("pass the fair turns of %d claimed jobs: %w", len(ids), err)
		}
		return nil, nil
	})
	return err
}
