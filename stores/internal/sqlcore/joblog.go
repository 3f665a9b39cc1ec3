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

// The job logs (spi.JobLogStore), in the portable SQL of every dialect:
// one row per line in {log}. An append locks its job's row with the
// dialect's JobFenceSQL (the claim sequence cannot move until it commits),
// reads how many lines the job holds and the last line of its claim, and
// inserts what spi.LinesToWrite keeps.

const logColumns = "claim_seq, line, run, logged_time, log_level, message"

// AppendJobLogs writes the appends' lines, fenced by their claims, in one
// transaction. It implements [spi.JobLogStore].
func (c Core[T]) AppendJobLogs(ctx context.Context, appends []spi.LogAppend) ([]bool, error) {
	s := &c.cfg.D.Syntax
	out := make([]bool, len(appends))
	err := c.do("append job logs", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			clear(out)
			for i, a := range appends {
				var status string
				var seq int64
				q, args := c.cfg.D.JobFenceSQL(a.JobID)
				err := tx.QueryRowContext(ctx, q, args...).Scan(&status, &seq)
				if errors.Is(err, sql.ErrNoRows) || (err == nil && seq != a.ClaimSeq) {
					continue
				}
				if err != nil {
					return err
				}
				out[i] = true
				var have int64
				var last sql.NullInt64
				q, args = s.logTally(a.ClaimRef)
				if err := tx.QueryRowContext(ctx, q, args...).Scan(&have, &last); err != nil {
					return err
				}
				if !last.Valid {
					last.Int64 = -1
				}
				for _, l := range spi.LinesToWrite(a, int(have), int(last.Int64)) {
					q, args := s.insertLogLine(a.JobID, l)
					if _, err := tx.ExecContext(ctx, q, args...); err != nil {
						return err
					}
				}
			}
			return nil
		})
	})
	return out, err
}

// JobLogs returns a page of the job's lines. It implements
// [spi.JobLogStore].
func (c Core[T]) JobLogs(ctx context.Context, jobID uuid.UUID, after spi.LogCursor, limit int) ([]spi.LogLine, error) {
	if limit <= 0 {
		limit = 100
	}
	q, args := c.cfg.D.Syntax.jobLogs(jobID, after, limit)
	return queryAll(ctx, c, "read the log of job "+jobID.String(), q, args, func(rows *sql.Rows) (spi.LogLine, error) {
		var l spi.LogLine
		var t any
		var msg sql.NullString
		if err := rows.Scan(&l.ClaimSeq, &l.Line, &l.Run, &t, &l.Level, &msg); err != nil {
			return l, fmt.Errorf("log line of job %s: %w", jobID, err)
		}
		var err error
		if l.Time, err = c.cfg.D.timeOf(t); err != nil {
			return l, fmt.Errorf("log line of job %s: unreadable time: %w", jobID, err)
		}
		l.Message = msg.String
		return l, nil
	})
}

// DeleteJobLogs deletes the lines older than before of up to limit jobs.
// It implements [spi.JobLogStore].
func (c Core[T]) DeleteJobLogs(ctx context.Context, before time.Time, limit int) (int, error) {
	s := &c.cfg.D.Syntax
	var n int64
	err := c.do("delete old job logs", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			n = 0
			q, args := s.oldLogs(before, limit)
			ids, err := c.readIDs(ctx, tx, q, args)
			if err != nil || len(ids) == 0 {
				return err
			}
			q, args = s.deleteLogs(sortedIDs(ids), before)
			r, err := tx.ExecContext(ctx, q, args...)
			if err != nil {
				return err
			}
			n, err = r.RowsAffected()
			return err
		})
	})
	return int(n), err
}

// The job log statements, in the syntax of a dialect.

func (s *Syntax) logTally(r spi.ClaimRef) (string, []any) {
	return s.SQL("SELECT COUNT(*), MAX(CASE WHEN claim_seq = ? THEN line END) FROM {log} WHERE job_id = ?", r.ClaimSeq, s.id(r.JobID))
}

func (s *Syntax) insertLogLine(id uuid.UUID, l spi.LogLine) (string, []any) {
	return s.SQL("INSERT INTO {log} (job_id, "+logColumns+") VALUES (?, ?, ?, ?, ?, ?, ?)",
		s.id(id), l.ClaimSeq, l.Line, l.Run, s.time(l.Time), l.Level, s.long(l.Message))
}

func (s *Syntax) jobLogs(id uuid.UUID, after spi.LogCursor, limit int) (string, []any) {
	return s.limited("SELECT "+logColumns+" FROM {log}\n\tWHERE job_id = ? AND (claim_seq > ? OR (claim_seq = ? AND line > ?))\n\tORDER BY claim_seq, line",
		int64(limit), s.id(id), after.ClaimSeq, after.ClaimSeq, after.Line)
}

func (s *Syntax) oldLogs(before time.Time, limit int) (string, []any) {
	return s.limited("SELECT job_id FROM {log} WHERE logged_time < ?", int64(max(limit, 1)), s.time(before))
}

func (s *Syntax) deleteLogs(ids []uuid.UUID, before time.Time) (string, []any) {
	return s.SQL("DELETE FROM {log} WHERE job_id IN (?) AND logged_time < ?", s.ids(ids), s.time(before))
}
