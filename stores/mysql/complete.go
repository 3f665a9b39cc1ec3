package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// fenceVerifier settles an owner write of refs whose COMMIT lost its
// connection: by the first of the entries it applied (*applied, set by the
// transaction's last run); with none, there was nothing to lose.
func (s *Store) fenceVerifier(refs []spi.ClaimRef, applied *[]int) verifier {
	return func(ctx context.Context) (bool, error) {
		if len(*applied) == 0 {
			return true, nil
		}
		return s.fenceCommitted(ctx, refs[(*applied)[0]])
	}
}

// fenceCommitted settles an owner write whose COMMIT lost its connection:
// the job of ref is RUNNING with ref's claim sequence exactly when the
// write did not commit (a completion leaves RUNNING; a release leaves it
// and advances the sequence).
func (s *Store) fenceCommitted(ctx context.Context, ref spi.ClaimRef) (bool, error) {
	var status string
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT status, claim_seq FROM `+s.sql.t.job+` WHERE job_id = ?`, binID(ref.JobID)).Scan(&status, &seq)
	if err != nil {
		return false, err
	}
	return !(status == string(spi.StatusRunning) && seq == ref.ClaimSeq), nil
}

// CompleteJobs applies a batch of fenced owner writes in one transaction:
// a locking read (in id order) of the batch's RUNNING jobs decides which
// entries apply, and one UPDATE ... JOIN of a derived table of the applying
// entries' values (UNION ALL of one SELECT per entry; several statements
// for a batch larger than the statement budget) writes them, fenced again
// by claim_seq and status = 'RUNNING'. Each completion applies only while
// its job is RUNNING with the named claim sequence; the result has one
// entry per completion, true when it applied. When one claim appears more
// than once in the batch, only its first completion can apply, as if they
// ran one after the other. SUCCEEDED sets the finish time, result and
// result type; RETRY puts the job back to PENDING at RetryAt with the new
// attempt count and last error and the owner cleared; FAILED sets the
// attempt count, last error and finish time. The claim sequence does not
// change. An unknown outcome fails the whole batch before anything is
// written. Transient errors run the transaction again; a connection lost
// during COMMIT is settled by reading a written job back.
func (s *Store) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := sqlcore.ValidOutcomes(cs); err != nil {
		return nil, fail("complete jobs", err)
	}
	out := make([]bool, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	refs := sqlcore.Refs(cs)
	ids := sqlcore.DistinctIDs(refs)
	var applied []int
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		applied = nil
		cur, err := s.dialect.Running(ctx, tx, ids, true)
		if err != nil {
			return err
		}
		app := sqlcore.Fenced(refs, cur)
		if len(app) == 0 {
			return nil
		}
		if err := s.at("complete:locked", tx); err != nil {
			return err
		}
		// Write in id order, like the locks.
		slices.SortFunc(app, func(a, b int) int { return bytes.Compare(cs[a].JobID[:], cs[b].JobID[:]) })
		for start := 0; start < len(app); {
			end, size := start, 0
			for end < len(app) {
				n := 300 + 2*len(cs[app[end]].Result) + len(cs[app[end]].LastError) + len(cs[app[end]].ResultType)
				if end > start && size+n > s.budget {
					break
				}
				size += n
				end++
			}
			if err := s.completeRows(ctx, tx, cs, app[start:end]); err != nil {
				return err
			}
			start = end
		}
		applied = app
		return nil
	}, s.fenceVerifier(refs, &applied))
	if err != nil {
		return nil, fail("complete jobs", err)
	}
	for _, i := range applied {
		out[i] = true
	}
	// A completion found already applied (an earlier call whose answer was
	// lost) counts.
	if err := sqlcore.Recognize(cs, nil, out, func(ids []uuid.UUID) ([]*spi.Job, error) {
		return s.dialect.LoadJobs(ctx, s.db, ids)
	}); err != nil {
		return nil, fail("complete jobs", err)
	}
	return out, nil
}

// completeRows writes the completions at idx with one statement.
func (s *Store) completeRows(ctx context.Context, tx *sql.Tx, cs []spi.Completion, idx []int) error {
	var b strings.Builder
	args := make([]any, 0, len(idx)*9)
	for k, i := range idx {
		c := cs[i]
		if k == 0 {
			b.WriteString(`SELECT ? AS id, ? AS seq, ? AS st, ? AS fin, ? AS due, ? AS att, ? AS err, ? AS res, ? AS rtype`)
		} else {
			b.WriteString("\n\t\tUNION ALL SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?")
		}
		args = append(args, binID(c.JobID), c.ClaimSeq)
		switch c.Outcome {
		case spi.OutcomeSucceeded:
			args = append(args, string(spi.StatusSucceeded), nullDBTime(c.FinishedAt), nil, int64(0), nil, nullBytes(c.Result), nullString(c.ResultType))
		case spi.OutcomeRetry:
			args = append(args, string(spi.StatusPending), nullDBTime(c.FinishedAt), dbTime(c.RetryAt), int64(c.Attempts), nullString(c.LastError), nil, nil)
		case spi.OutcomeFailed:
			args = append(args, string(spi.StatusFailed), nullDBTime(c.FinishedAt), nil, int64(c.Attempts), nullString(c.LastError), nil, nil)
		}
	}
	// The assignments read only v (and columns not assigned before them),
	// so their left-to-right evaluation does not matter.
	_, err := tx.ExecContext(ctx, `UPDATE `+s.sql.t.job+` j JOIN (`+b.String()+`) v ON j.job_id = v.id
		SET j.status = v.st,
			j.scheduled_time = IF(v.st = 'PENDING', v.due, j.scheduled_time),
			j.attempts = IF(v.st = 'SUCCEEDED', j.attempts, v.att),
			j.last_error = IF(v.st = 'SUCCEEDED', j.last_error, v.err),
			j.owner_node = IF(v.st = 'PENDING', NULL, j.owner_node),
			j.finished_time = IF(v.st = 'PENDING', j.finished_time, v.fin),
			j.job_result = IF(v.st = 'SUCCEEDED', v.res, j.job_result),
			j.result_type = IF(v.st = 'SUCCEEDED', v.rtype, j.result_type)
		WHERE j.status = 'RUNNING' AND j.claim_seq = v.seq`, args...)
	if err != nil {
		return fmt.Errorf("write the completions: %w", err)
	}
	return nil
}
