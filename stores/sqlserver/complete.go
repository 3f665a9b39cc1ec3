package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// writeCompletions applies the completions of cs at positions pos: one
// UPDATE ... FROM a VALUES list joined by primary key per 200 completions,
// each returning (OUTPUT) which entries applied: the WriteCompletions of
// sqlcore.Dialect.
func writeCompletions(ctx context.Context, tx *sql.Tx, cs []spi.Completion, pos []int, out []bool) error {
	for start := 0; start < len(pos); start += rowsPerComplet {
		chunk := pos[start:min(start+rowsPerComplet, len(pos))]
		args := make([]any, 0, len(chunk)*numCompleteArgs)
		for _, i := range chunk {
			args = append(args, completeArgs(int64(i), cs[i])...)
		}
		if err := collectApplied(ctx, tx, out, completeSQL(len(chunk)), args); err != nil {
			return err
		}
	}
	return nil
}

// completeArgs are the parameters of one completion row of completeSQL.
func completeArgs(i int64, c spi.Completion) []any {
	var st string
	var retryAt any = nullDBTime(time.Time{})
	var res []byte
	var rtype, lastErr any
	switch c.Outcome {
	case spi.OutcomeSucceeded:
		st, res, rtype = string(spi.StatusSucceeded), nullBytes(c.Result), nullText(c.ResultType)
	case spi.OutcomeRetry:
		st, retryAt, lastErr = string(spi.StatusPending), nullDBTime(c.RetryAt), nullText(c.LastError)
	case spi.OutcomeFailed:
		st, lastErr = string(spi.StatusFailed), nullText(c.LastError)
	}
	return []any{i, dbID(c.JobID), c.ClaimSeq, st, nullDBTime(c.FinishedAt), retryAt,
		int64(c.Attempts), lastErr, res, rtype}
}

// collectApplied runs a fenced batch statement that returns the indexes of
// the entries that applied, and marks them in out.
func collectApplied(ctx context.Context, tx *sql.Tx, out []bool, query string, args []any) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var i int64
		if err := rows.Scan(&i); err != nil {
			return err
		}
		if i < 0 || int(i) >= len(out) {
			return fmt.Errorf("the server returned entry %d of a batch of %d", i, len(out))
		}
		out[i] = true
	}
	return rows.Err()
}
