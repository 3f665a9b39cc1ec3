package sqlcore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The audit log (spi.AuditLog, migration 12), in the portable SQL of every
// dialect: one row per entry in {audit}, its seq given by the database's
// identity (or auto-increment) column and handed back as the dialect's
// Syntax.NewKey says. The database, not the store, numbers the entries:
// a sequence is the one counter that every process of a cluster shares
// without a lock of its own, that never goes back after a delete, and that
// gives an append a number above every append that returned before it.

const auditColumns = "audit_time, actor, audit_action, target, audit_count, detail"

// wallClock is the time of an entry appended with a zero Time. The audit
// log is the one place where a SQL store reads the clock itself:
// AppendAudit takes no now, an operator's action happening in real time
// (its callers pass their own clock's time); the memory store does the
// same.
var wallClock = time.Now

// AppendAudit checks e, writes it and returns it with its Seq and its Time
// (in UTC, to the microsecond; the wall clock's when zero). A refused
// entry writes nothing and returns Validate's error, wrapped. The insert
// runs again after a transient error like every transaction of the store;
// after a COMMIT whose outcome was lost, an entry may so be written twice,
// under two numbers, but never lost. It implements [spi.AuditLog].
func (c Core[T]) AppendAudit(ctx context.Context, e spi.AuditEntry) (spi.AuditEntry, error) {
	const op = "append audit entry"
	if err := e.Validate(); err != nil {
		return spi.AuditEntry{}, c.cfg.Fail(op, err)
	}
	if e.Time.IsZero() {
		e.Time = wallClock()
	}
	e.Time = e.Time.UTC().Truncate(time.Microsecond)
	s := &c.cfg.D.Syntax
	err := c.do(op, func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			var seq int64
			q, args := s.insertAudit(e, &seq)
			var err error
			switch s.NewKey {
			case KeyInto:
				_, err = tx.ExecContext(ctx, q, args...)
			case KeyLastInsertID:
				var r sql.Result
				if r, err = tx.ExecContext(ctx, q, args...); err == nil {
					seq, err = r.LastInsertId()
				}
			default:
				err = tx.QueryRowContext(ctx, q, args...).Scan(&seq)
			}
			if err == nil && seq <= 0 {
				err = fmt.Errorf("the database gave the entry seq %d, not a positive one", seq)
			}
			e.Seq = seq
			return err
		})
	})
	if err != nil {
		return spi.AuditEntry{}, err
	}
	return e, nil
}

// ListAudit returns up to limit (zero or less: spi.DefaultAuditPage)
// entries whose seq is below before (zero or less: every entry), newest
// first: one backward range of the primary key. It implements
// [spi.AuditLog].
func (c Core[T]) ListAudit(ctx context.Context, before int64, limit int) ([]spi.AuditEntry, error) {
	if limit <= 0 {
		limit = spi.DefaultAuditPage
	}
	q, args := c.cfg.D.Syntax.listAudit(before, limit)
	out, err := queryAll(ctx, c, "list the audit log", q, args, func(rows *sql.Rows) (spi.AuditEntry, error) {
		var e spi.AuditEntry
		var t any
		var target, detail sql.NullString
		if err := rows.Scan(&e.Seq, &t, &e.Actor, &e.Action, &target, &e.Count, &detail); err != nil {
			return e, fmt.Errorf("audit entry: %w", err)
		}
		tm, err := c.cfg.D.timeOf(t)
		if err != nil {
			return e, fmt.Errorf("audit entry %d: unreadable time: %w", e.Seq, err)
		}
		e.Time, e.Target, e.Detail = tm.UTC(), target.String, detail.String
		return e, nil
	})
	if out == nil && err == nil {
		out = []spi.AuditEntry{}
	}
	return out, err
}

// DeleteAudit deletes up to limit (zero or less: spi.DefaultAuditPage)
// entries older than before, oldest first by (time, seq), and returns how
// many it deleted: it reads their seqs through idx_scheduler_audit_time,
// then deletes them by primary key (in IN lists of at most MaxIDs), in one
// transaction. An entry that a concurrent deletion took first is not
// counted. It implements [spi.AuditLog].
func (c Core[T]) DeleteAudit(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		limit = spi.DefaultAuditPage
	}
	s := &c.cfg.D.Syntax
	var n int64
	err := c.do("delete old audit entries", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			n = 0
			q, args := s.oldAudit(before, limit)
			rows, err := tx.QueryContext(ctx, q, args...)
			if err != nil {
				return err
			}
			seqs, err := ReadColumn[int64](rows)
			if cerr := rows.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			_, err = InChunks(seqs, c.cfg.D.chunk(), func(chunk []int64) ([]struct{}, error) {
				q, args := s.deleteAudit(chunk, before)
				r, err := tx.ExecContext(ctx, q, args...)
				if err != nil {
					return nil, err
				}
				k, err := r.RowsAffected()
				n += k
				return nil, err
			})
			return err
		})
	})
	return int(n), err
}

// The audit statements, in the syntax of a dialect.

// insertAudit inserts e; with KeyInto, the database writes the new seq
// into *seq through an output bind.
func (s *Syntax) insertAudit(e spi.AuditEntry, seq *int64) (string, []any) {
	insert, values := "INSERT INTO {audit} ("+auditColumns+")", " VALUES (?, ?, ?, ?, ?, ?)"
	args := []any{s.time(e.Time), s.text(e.Actor), s.text(e.Action), s.text(e.Target), e.Count, s.text(e.Detail)}
	switch s.NewKey {
	case KeyOutput:
		return s.SQL(insert+" OUTPUT INSERTED.seq"+values, args...)
	case KeyInto:
		return s.SQL(insert+values+" RETURNING seq INTO ?", append(args, sql.Out{Dest: seq})...)
	case KeyLastInsertID:
		return s.SQL(insert+values, args...)
	}
	return s.SQL(insert+values+" RETURNING seq", args...)
}

func (s *Syntax) listAudit(before int64, limit int) (string, []any) {
	if before <= 0 {
		return s.limited("SELECT seq, "+auditColumns+" FROM {audit} ORDER BY seq DESC", int64(limit))
	}
	return s.limited("SELECT seq, "+auditColumns+" FROM {audit} WHERE seq < ? ORDER BY seq DESC", int64(limit), before)
}

func (s *Syntax) oldAudit(before time.Time, limit int) (string, []any) {
	return s.limited("SELECT seq FROM {audit} WHERE audit_time < ? ORDER BY audit_time, seq", int64(limit), s.time(before))
}

func (s *Syntax) deleteAudit(seqs []int64, before time.Time) (string, []any) {
	return s.SQL("DELETE FROM {audit} WHERE seq IN (?) AND audit_time < ?", In(Args(seqs, nil)), s.time(before))
}

// auditStatements are the audit statements for the golden files.
func (s *Syntax) auditStatements() map[string]string {
	t := time.Unix(0, 0)
	text := func(q string, _ []any) string { return q }
	var seq int64
	return map[string]string{
		"audit_insert":      text(s.insertAudit(spi.AuditEntry{Time: t, Actor: "a", Action: "b", Target: "c", Count: 1, Detail: "d"}, &seq)),
		"audit_list":        text(s.listAudit(0, 10)),
		"audit_list_before": text(s.listAudit(5, 10)),
		"audit_old":         text(s.oldAudit(t, 10)),
		"audit_delete_2":    text(s.deleteAudit([]int64{1, 2}, t)),
	}
}
