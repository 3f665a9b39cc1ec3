package sqlite

import (
	"context"
	"database/sql"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// fence is the condition of every owner write.
const fence = ` WHERE job_id = ? AND claim_seq = ? AND status = 'RUNNING'`

// writeCompletions applies the completions of cs at positions pos, one
// fenced UPDATE each (SQLite writes one transaction at a time, so there is
// no batching to gain): the WriteCompletions of sqlcore.Dialect.
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

// applied reports whether a fenced UPDATE changed its row.
func applied(res sql.Result) (bool, error) {
	n, err := res.RowsAffected()
	return n == 1, err
}
