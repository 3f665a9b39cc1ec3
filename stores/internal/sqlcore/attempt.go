package sqlcore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The attempt records (spi.AttemptStore), in the portable SQL of every
// dialect: one row per run in {attempt}, keyed by the job and the run's
// claim sequence, written in the transaction of the transition that ends
// the run. A completion brings its record (spi.Completion.Record); a
// release, a recovery and a cancel read theirs from the RUNNING rows they
// lock before they write them (recordRuns). A record of a claim past
// spi.AttemptsKept deletes the job's records it outdates.

const attemptColumns = "claim_seq, node_id, started_time, finished_time, outcome, error_text"

// JobAttempts returns the stored records of job id's runs, in claim
// order. It implements [spi.AttemptStore].
func (c Core[T]) JobAttempts(ctx context.Context, id uuid.UUID) ([]spi.Attempt, error) {
	s := &c.cfg.D.Syntax
	q, args := s.SQL("SELECT "+attemptColumns+" FROM {attempt} WHERE job_id = ? ORDER BY claim_seq", s.id(id))
	return queryAll(ctx, c, "read the attempts of job "+id.String(), q, args, func(rows *sql.Rows) (spi.Attempt, error) {
		a := spi.Attempt{JobID: id}
		var started, finished any
		var node, outcome, msg sql.NullString
		if err := rows.Scan(&a.ClaimSeq, &node, &started, &finished, &outcome, &msg); err != nil {
			return a, fmt.Errorf("attempt of job %s: %w", id, err)
		}
		var err error
		if a.StartedAt, err = c.cfg.D.timeOf(started); err == nil {
			a.FinishedAt, err = c.cfg.D.timeOf(finished)
		}
		if err != nil {
			return a, fmt.Errorf("attempt of job %s: unreadable time: %w", id, err)
		}
		a.Node, a.Outcome, a.Error = node.String, spi.AttemptOutcome(outcome.String), msg.String
		return a, nil
	})
}

// writeAttempts inserts the records as in tx, each deleting the records
// of its job that it outdates (spi.AttemptsPruned).
func (c Core[T]) writeAttempts(ctx context.Context, tx *sql.Tx, as []spi.Attempt) error {
	s := &c.cfg.D.Syntax
	for _, a := range as {
		q, args := s.SQL("INSERT INTO {attempt} (job_id, "+attemptColumns+") VALUES (?, ?, ?, ?, ?, ?, ?)",
			s.id(a.JobID), a.ClaimSeq, s.nullName(a.Node), s.time(a.StartedAt), s.time(a.FinishedAt), s.text(string(a.Outcome)), s.long(a.Error))
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("record attempt %d of job %s: %w", a.ClaimSeq, a.JobID, err)
		}
		if cut := spi.AttemptsPruned(a.ClaimSeq); cut > 0 {
			q, args := s.SQL("DELETE FROM {attempt} WHERE job_id = ? AND claim_seq <= ?", s.id(a.JobID), cut)
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("prune the attempts of job %s: %w", a.JobID, err)
			}
		}
	}
	return nil
}

// completionAttempts writes in tx the records of the completions of cs
// at pos that applied in it (out): those written by an earlier
// transaction (Recognize) have theirs already.
func (c Core[T]) completionAttempts(ctx context.Context, tx *sql.Tx, cs []spi.Completion, pos []int, out []bool) error {
	var as []spi.Attempt
	for _, i := range pos {
		if a, ok := cs[i].Record(); ok && out[i] {
			as = append(as, a)
		}
	}
	return c.writeAttempts(ctx, tx, as)
}

// recordRuns locks those of ids that are RUNNING and writes in tx the
// record of each run, ended at now with outcome by the write that
// follows in tx (a release, a recovery, a cancel): the lock holds the
// rows as read until that write.
func (c Core[T]) recordRuns(ctx context.Context, tx *sql.Tx, ids []uuid.UUID, outcome spi.AttemptOutcome, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	s := &c.cfg.D.Syntax
	as, err := InChunks(ids, c.cfg.D.chunk(), func(chunk []uuid.UUID) ([]spi.Attempt, error) {
		q, args := s.SQL("SELECT claim_seq, job_id, owner_node, claimed_time FROM {job}"+s.IDHint+s.LockHint+
			"\n\tWHERE status = "+s.running()+" AND job_id IN (?) ORDER BY job_id"+s.LockOn, s.ids(chunk))
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []spi.Attempt
		for rows.Next() {
			var raw T
			var owner sql.NullString
			var claimed any
			a := spi.Attempt{FinishedAt: now, Outcome: outcome}
			if err := rows.Scan(&a.ClaimSeq, &raw, &owner, &claimed); err != nil {
				return nil, err
			}
			if a.JobID, err = c.cfg.D.ParseID(raw); err != nil {
				continue // a row that does not decode: no record, the transition goes on
			}
			a.Node = owner.String
			if a.StartedAt, err = c.cfg.D.timeOf(claimed); err != nil {
				return nil, fmt.Errorf("job %s: unreadable claim time: %w", a.JobID, err)
			}
			out = append(out, a)
		}
		return out, rows.Err()
	})
	if err != nil {
		return err
	}
	return c.writeAttempts(ctx, tx, as)
}
