package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// fence is the condition of every owner write.
const fence = ` WHERE job_id = ? AND claim_seq = ? AND status = 'RUNNING'`

// writeCompletions applies the completions of cs at positions pos, one
// fenced UPDATE each (SQLite writes one transaction at a time, so there is
// no batching to gain): the Write of sqlcore.TxCompletions.
func writeCompletions(ctx context.Context, tx *sql.Tx, cs []spi.Completion, pos []int, out []bool) error {
	for _, i := range pos {
		c := cs[i]
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
}

// loadJobs reads the jobs of ids that exist and can be decoded.
func loadJobs(ctx context.Context, tx *sql.Tx, ids []uuid.UUID) ([]*spi.Job, error) {
	text := make([]string, len(ids))
	for i, id := range ids {
		text[i] = id.String()
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+jobColumns+` FROM scheduler_job WHERE job_id IN (SELECT value FROM json_each(?))`, jsonList(text))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var r rowScan
	return sqlcore.ReadReadable(rows, func() (*spi.Job, error) { return r.decode(rows) })
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
