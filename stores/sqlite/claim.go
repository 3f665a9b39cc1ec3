package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// candidatesQuery selects, for each priority level, the first LIMIT due
// PENDING jobs in (scheduled_time, job_id) order: five range scans of the
// covering index idx_scheduler_job_claim. Its arguments are (now, limit)
// repeated once per level, from CRITICAL down.
var candidatesQuery = func() string {
	parts := make([]string, 0, spi.NumPriorities)
	for p := spi.NumPriorities - 1; p >= 0; p-- {
		parts = append(parts, fmt.Sprintf(`SELECT * FROM (SELECT job_id, priority, scheduled_time FROM scheduler_job
			WHERE status = 'PENDING' AND priority = %d AND scheduled_time <= ?
			ORDER BY scheduled_time, job_id LIMIT ?)`, p))
	}
	return strings.Join(parts, "\nUNION ALL\n")
}()

// candidate is one due job considered by a claim.
type candidate struct {
	id        string
	eff       int64
	scheduled int64
}

// ClaimJobs moves up to p.Limit due PENDING jobs to RUNNING for p.NodeID in
// one IMMEDIATE transaction and returns them in claim order: effective
// priority descending, scheduled time ascending, id ascending. It reads the
// first p.Limit due jobs of each priority level from the claim index, merges
// them in Go (aging is monotone inside a level, so this is exact), and
// updates the chosen rows with one UPDATE ... RETURNING. A chosen row that
// cannot be read back as a job is failed into the dead-letter queue with the
// problem as its last error and left out of the result.
func (s *Store) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if p.Limit <= 0 {
		return nil, nil
	}
	now := micros(p.Now)
	var out []*spi.Job
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		cands, err := claimCandidates(ctx, tx, p, now)
		if err != nil || len(cands) == 0 {
			return err
		}
		ids := make([]string, len(cands))
		rank := make(map[string]int, len(cands))
		for i, c := range cands {
			ids[i] = c.id
			rank[c.id] = i
		}
		rows, err := tx.QueryContext(ctx, `UPDATE scheduler_job
			SET status = 'RUNNING', owner_node = ?, claim_seq = claim_seq + 1, claimed_time = ?
			WHERE job_id IN (SELECT value FROM json_each(?)) AND status = 'PENDING'
			RETURNING `+jobColumns, nullString(p.NodeID), now, jsonList(ids))
		if err != nil {
			return err
		}
		defer rows.Close()
		type ranked struct {
			job  *spi.Job
			rank int
		}
		got := make([]ranked, 0, len(cands))
		var bad []badRow
		var r rowScan
		for rows.Next() {
			if err := r.scan(rows); err != nil {
				bad = append(bad, badRow{r.id, err})
				continue
			}
			j, err := r.job()
			if err != nil {
				bad = append(bad, badRow{r.id, err})
				continue
			}
			got = append(got, ranked{j, rank[r.id]})
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		if err := failCorrupt(ctx, tx, bad, now); err != nil {
			return err
		}
		slices.SortFunc(got, func(a, b ranked) int { return a.rank - b.rank })
		out = make([]*spi.Job, len(got))
		for i, g := range got {
			out[i] = g.job
		}
		return nil
	})
	if err != nil {
		return nil, fail("claim jobs", err)
	}
	return out, nil
}

// claimCandidates returns the jobs to claim, best first: at most p.Limit of
// the union of each level's first p.Limit due jobs.
func claimCandidates(ctx context.Context, tx *sql.Tx, p spi.ClaimParams, now int64) ([]candidate, error) {
	args := make([]any, 0, 2*spi.NumPriorities)
	for range spi.NumPriorities {
		args = append(args, now, p.Limit)
	}
	rows, err := tx.QueryContext(ctx, candidatesQuery, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cands []candidate
	for rows.Next() {
		var c candidate
		var prio int64
		if err := rows.Scan(&c.id, &prio, &c.scheduled); err != nil {
			return nil, err
		}
		c.eff = spi.EffectivePriority(spi.Priority(prio), fromMicros(c.scheduled), p.Now, p.BoostInterval)
		cands = append(cands, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The canonical UUID text sorts like the UUID bytes.
	slices.SortFunc(cands, func(a, b candidate) int {
		if c := cmp.Compare(b.eff, a.eff); c != 0 {
			return c
		}
		if c := cmp.Compare(a.scheduled, b.scheduled); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return cands[:min(len(cands), p.Limit)], nil
}

// badRow is a claimed row that could not be decoded.
type badRow struct {
	id  string
	err error
}

// failCorrupt moves undecodable claimed rows to FAILED so they cannot block
// the queue; GetJob and ListJobs keep reporting them as corrupt.
func failCorrupt(ctx context.Context, tx *sql.Tx, bad []badRow, now int64) error {
	for _, b := range bad {
		if _, err := tx.ExecContext(ctx, `UPDATE scheduler_job
			SET status = 'FAILED', owner_node = NULL, finished_time = ?, last_error = ?
			WHERE job_id = ?`, now, "ratchet: corrupt job row: "+b.err.Error(), b.id); err != nil {
			return err
		}
	}
	return nil
}

// fence is the condition of every owner write.
const fence = ` WHERE job_id = ? AND claim_seq = ? AND status = 'RUNNING'`

// CompleteJobs applies a batch of fenced owner writes in one transaction.
// Each applies only while its job is RUNNING with the named claim sequence;
// the result has one entry per completion, true when it applied. SUCCEEDED
// sets the finish time, result and result type; RETRY puts the job back to
// PENDING at RetryAt with the new attempt count and last error and the owner
// cleared; FAILED sets the attempt count, last error and finish time. The
// claim sequence does not change. An unknown outcome fails the whole batch
// before anything is written.
func (s *Store) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	for _, c := range cs {
		switch c.Outcome {
		case spi.OutcomeSucceeded, spi.OutcomeRetry, spi.OutcomeFailed:
		default:
			return nil, fmt.Errorf("sqlite: complete jobs: job %s: unknown outcome %d", c.JobID, c.Outcome)
		}
	}
	out := make([]bool, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		for i, c := range cs {
			var res sql.Result
			var err error
			id := c.JobID.String()
			switch c.Outcome {
			case spi.OutcomeSucceeded:
				res, err = tx.ExecContext(ctx, `UPDATE scheduler_job
					SET status = 'SUCCEEDED', finished_time = ?, job_result = ?, result_type = ?`+fence,
					nullMicros(c.FinishedAt), nullBytes(c.Result), nullString(c.ResultType), id, c.ClaimSeq)
			case spi.OutcomeRetry:
				res, err = tx.ExecContext(ctx, `UPDATE scheduler_job
					SET status = 'PENDING', scheduled_time = ?, attempts = ?, last_error = ?, owner_node = NULL`+fence,
					micros(c.RetryAt), int64(c.Attempts), nullString(c.LastError), id, c.ClaimSeq)
			case spi.OutcomeFailed:
				res, err = tx.ExecContext(ctx, `UPDATE scheduler_job
					SET status = 'FAILED', finished_time = ?, attempts = ?, last_error = ?`+fence,
					nullMicros(c.FinishedAt), int64(c.Attempts), nullString(c.LastError), id, c.ClaimSeq)
			}
			if err != nil {
				return err
			}
			if out[i], err = applied(res); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fail("complete jobs", err)
	}
	return out, nil
}

// ReleaseJobs puts claimed jobs back to PENDING, due at now, with the owner
// cleared and the claim sequence advanced, without charging attempts or the
// crash budget. Fenced like CompleteJobs; one transaction per batch.
func (s *Store) ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		for i, r := range refs {
			res, err := tx.ExecContext(ctx, `UPDATE scheduler_job
				SET status = 'PENDING', owner_node = NULL, scheduled_time = ?, claim_seq = claim_seq + 1`+fence,
				micros(now), r.JobID.String(), r.ClaimSeq)
			if err != nil {
				return err
			}
			if out[i], err = applied(res); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fail("release jobs", err)
	}
	return out, nil
}

// applied reports whether a fenced UPDATE changed its row.
func applied(res sql.Result) (bool, error) {
	n, err := res.RowsAffected()
	return n == 1, err
}
