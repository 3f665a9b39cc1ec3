package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// writeCompletions is the WriteCompletions of the dialect: one UPDATE ...
// JOIN of a derived table of the entries' values (UNION ALL of one SELECT
// per entry; several statements for a batch larger than the statement
// budget), in id order, each row fenced by claim_seq and status =
// 'RUNNING'. The statements lock the rows as they write them, in that
// order. When they matched as many rows as there are entries (the pool
// counts matched rows, ClientFoundRows; a matched row always changes
// status), every entry applied: a row is written once however many
// entries name its job, and of two entries of one job only the one of its
// current claim can apply.
// Otherwise (a superseded completion: rare) no entry is marked here, and
// the core's Recognize, which follows, reads the jobs back and marks those
// that now show exactly what their entry wrote. A read of the fences
// before the write (a locking SELECT in id order) would tell the same for
// every batch at the cost of a statement: 4 % of MariaDB's time in a
// burn-down.
func (s *Store) writeCompletions(ctx context.Context, tx *sql.Tx, cs []spi.Completion, pos []int, out []bool) error {
	app := slices.Clone(pos)
	slices.SortFunc(app, func(a, b int) int { return bytes.Compare(cs[a].JobID[:], cs[b].JobID[:]) })
	var matched int64
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
		n, err := s.completeRows(ctx, tx, cs, app[start:end])
		if err != nil {
			return err
		}
		if start == 0 {
			if err := s.at("complete:locked", tx); err != nil {
				return err
			}
		}
		matched += n
		start = end
	}
	if matched == int64(len(app)) {
		for _, i := range app {
			out[i] = true
		}
	}
	return nil
}

// completeRows writes the completions at idx with one statement and
// returns how many rows it matched.
func (s *Store) completeRows(ctx context.Context, tx *sql.Tx, cs []spi.Completion, idx []int) (int64, error) {
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
	res, err := tx.ExecContext(ctx, `UPDATE `+s.jobTable+` j JOIN (`+b.String()+`) v ON j.job_id = v.id
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
		return 0, fmt.Errorf("write the completions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("write the completions: %w", err)
	}
	return n, nil
}
