package sqlcore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The value rewriter (spi.ValueRewriter), in the portable SQL of every
// dialect: a page of jobs by id with their payloads and results, their
// states by IN list; each rewrite an UPDATE guarded on the column still
// holding the bytes read (Syntax.BlobEq), all of a call in one
// transaction.

// valueTables are the tables a value pass reads: the live ones, or the
// archive's.
func valueTables(archived bool) (job, state string) {
	if archived {
		return "{archive}", "{archive_state}"
	}
	return "{job}", "{state}"
}

// JobValues returns the payloads, results, states and log lines of up to
// limit jobs above after, live or archived, in id order. It implements
// [spi.ValueRewriter].
func (c Core[T]) JobValues(ctx context.Context, archived bool, after uuid.UUID, limit int) ([]spi.StoredValue, uuid.UUID, error) {
	s, d := &c.cfg.D.Syntax, &c.cfg.D
	limit = max(limit, 1)
	jobT, stateT := valueTables(archived)
	var out []spi.StoredValue
	last := uuid.Nil
	err := c.do("read job values", func() error {
		out, last = nil, uuid.Nil
		q, args := s.valuesPage(jobT, after, limit+1)
		type row struct {
			id              uuid.UUID
			payload, result []byte
		}
		rows, err := queryRows(ctx, c.cfg.DB, q, args, func(r *sql.Rows) (row, error) {
			var x row
			var raw T
			if err := r.Scan(&raw, &x.payload, &x.result); err != nil {
				return x, err
			}
			var err error
			x.id, err = d.ParseID(raw)
			return x, err
		})
		if err != nil {
			return err
		}
		more := len(rows) > limit
		rows = rows[:min(len(rows), limit)]
		ids := make([]uuid.UUID, len(rows))
		for i, r := range rows {
			ids[i] = r.id
		}
		extra := map[uuid.UUID][]spi.StoredValue{}
		if _, err := InChunks(ids, min(d.chunk(), maxJoin), func(ids []uuid.UUID) ([]struct{}, error) {
			q, args := s.statesOf(stateT, ids)
			states, err := queryRows(ctx, c.cfg.DB, q, args, func(r *sql.Rows) (spi.StoredValue, error) {
				v := spi.StoredValue{Column: spi.ColumnState, Archived: archived}
				var raw T
				if err := r.Scan(&raw, &v.Namespace, &v.Value); err != nil {
					return v, err
				}
				var err error
				v.JobID, err = d.ParseID(raw)
				return v, err
			})
			if err != nil {
				return nil, err
			}
			q, args = s.logsOf(ids)
			lines, err := queryRows(ctx, c.cfg.DB, q, args, func(r *sql.Rows) (spi.StoredValue, error) {
				v := spi.StoredValue{Column: spi.ColumnLog}
				var raw T
				var msg sql.NullString
				if err := r.Scan(&raw, &v.ClaimSeq, &v.Line, &msg); err != nil {
					return v, err
				}
				v.Value = []byte(msg.String)
				var err error
				v.JobID, err = d.ParseID(raw)
				return v, err
			})
			var waits, conds []spi.StoredValue
			if err == nil && !archived {
				q, args = s.signalsOf(ids)
				waits, err = queryRows(ctx, c.cfg.DB, q, args, func(r *sql.Rows) (spi.StoredValue, error) {
					v := spi.StoredValue{Column: spi.ColumnSignal}
					var raw T
					var key sql.NullString
					if err := r.Scan(&raw, &v.Namespace, &key, &v.Value); err != nil {
						return v, err
					}
					v.SignalKey = key.String
					var err error
					v.JobID, err = d.ParseID(raw)
					return v, err
				})
			}
			if err == nil && !archived {
				q, args = s.conditionsOf(ids)
				conds, err = queryRows(ctx, c.cfg.DB, q, args, func(r *sql.Rows) (spi.StoredValue, error) {
					v := spi.StoredValue{Column: spi.ColumnCondition}
					var raw, parent T
					if err := r.Scan(&raw, &parent, &v.Value); err != nil {
						return v, err
					}
					p, err := d.ParseID(parent)
					if err != nil {
						return v, err
					}
					v.Namespace = p.String()
					v.JobID, err = d.ParseID(raw)
					return v, err
				})
			}
			for _, v := range slices.Concat(states, lines, waits, conds) {
				if len(v.Value) > 0 {
					extra[v.JobID] = append(extra[v.JobID], v)
				}
			}
			return nil, err
		}); err != nil {
			return err
		}
		for _, r := range rows {
			if len(r.payload) > 0 {
				out = append(out, spi.StoredValue{JobID: r.id, Column: spi.ColumnPayload, Archived: archived, Value: r.payload})
			}
			if len(r.result) > 0 {
				out = append(out, spi.StoredValue{JobID: r.id, Column: spi.ColumnResult, Archived: archived, Value: r.result})
			}
			out = append(out, extra[r.id]...)
		}
		if more {
			last = rows[len(rows)-1].id
		}
		return nil
	})
	return out, last, err
}

// RewriteValues applies each rewrite where its column still holds the
// value read, in one transaction. It implements [spi.ValueRewriter].
func (c Core[T]) RewriteValues(ctx context.Context, rs []spi.ValueRewrite) ([]bool, error) {
	s := &c.cfg.D.Syntax
	for _, r := range rs {
		if len(r.New) == 0 {
			return nil, c.cfg.Fail("rewrite values", fmt.Errorf("rewrite of %s of job %s: empty value", r.Column, r.JobID))
		}
		if _, err := s.rewrite(r); err != nil {
			return nil, c.cfg.Fail("rewrite values", err)
		}
	}
	out := make([]bool, len(rs))
	err := c.do("rewrite values", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			clear(out)
			for i, r := range rs {
				st, _ := s.rewrite(r)
				ok, err := applied(tx.ExecContext(ctx, st.SQL, st.Args...))
				if err != nil {
					return err
				}
				out[i] = ok
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// valuesPage reads (job_id, payload, job_result) of up to n jobs of table
// jobT above after, in id order.
func (s *Syntax) valuesPage(jobT string, after uuid.UUID, n int) (string, []any) {
	return s.limited("SELECT job_id, payload, job_result FROM "+jobT+" WHERE job_id > ? ORDER BY job_id", int64(n), s.id(after))
}

// statesOf reads (job_id, namespace, state_json) of the jobs of ids from
// table stateT.
func (s *Syntax) statesOf(stateT string, ids []uuid.UUID) (string, []any) {
	return s.SQL("SELECT job_id, namespace, state_json FROM "+stateT+" WHERE job_id IN (?) ORDER BY job_id, namespace", s.ids(ids))
}

// logsOf reads (job_id, claim_seq, line, message) of the jobs of ids.
func (s *Syntax) logsOf(ids []uuid.UUID) (string, []any) {
	return s.SQL("SELECT job_id, claim_seq, line, message FROM {log} WHERE job_id IN (?) ORDER BY job_id, claim_seq, line", s.ids(ids))
}

// signalsOf reads (job_id, name, signal_key, payload) of the delivered
// waits of the jobs of ids.
func (s *Syntax) signalsOf(ids []uuid.UUID) (string, []any) {
	return s.SQL("SELECT job_id, name, signal_key, payload FROM {signal} WHERE job_id IN (?) AND payload IS NOT NULL ORDER BY job_id", s.ids(ids))
}

// conditionsOf reads (child_id, parent_id, cond_args) of the dependencies
// with condition arguments of the jobs of ids.
func (s *Syntax) conditionsOf(ids []uuid.UUID) (string, []any) {
	return s.SQL("SELECT child_id, parent_id, cond_args FROM {dep} WHERE child_id IN (?) AND cond_args IS NOT NULL ORDER BY child_id, position", s.ids(ids))
}

// blobEq is the condition that column col holds exactly the bytes of the
// next argument.
func (s *Syntax) blobEq(col string) string {
	if s.BlobEq != nil {
		return s.BlobEq(col)
	}
	return col + " = ?"
}

// rewrite is the guarded UPDATE of r.
func (s *Syntax) rewrite(r spi.ValueRewrite) (Statement, error) {
	jobT, stateT := valueTables(r.Archived)
	var q string
	var args []any
	switch r.Column {
	case spi.ColumnPayload:
		q, args = s.SQL("UPDATE "+jobT+" SET payload = ? WHERE job_id = ? AND "+s.blobEq("payload"), s.blob(r.New), s.id(r.JobID), s.blob(r.Value))
	case spi.ColumnResult:
		q, args = s.SQL("UPDATE "+jobT+" SET job_result = ? WHERE job_id = ? AND "+s.blobEq("job_result"), s.blob(r.New), s.id(r.JobID), s.blob(r.Value))
	case spi.ColumnState:
		q, args = s.SQL("UPDATE "+stateT+" SET state_json = ? WHERE job_id = ? AND namespace = ? AND "+s.blobEq("state_json"),
			s.blob(r.New), s.id(r.JobID), s.name(r.Namespace), s.blob(r.Value))
	case spi.ColumnSignal:
		if r.Archived {
			return Statement{}, fmt.Errorf("rewrite of the signal of archived job %s: an archived job keeps none", r.JobID)
		}
		q, args = s.SQL("UPDATE {signal} SET payload = ? WHERE job_id = ? AND "+s.blobEq("payload"), s.blob(r.New), s.id(r.JobID), s.blob(r.Value))
	case spi.ColumnCondition:
		parent, err := uuid.Parse(r.Namespace)
		if err != nil || r.Archived {
			return Statement{}, fmt.Errorf("rewrite of a condition of job %s: parent %q: not a live job's dependency", r.JobID, r.Namespace)
		}
		q, args = s.SQL("UPDATE {dep} SET cond_args = ? WHERE child_id = ? AND parent_id = ? AND "+s.blobEq("cond_args"),
			s.blob(r.New), s.id(r.JobID), s.id(parent), s.blob(r.Value))
	case spi.ColumnLog:
		q, args = s.SQL("UPDATE {log} SET message = ? WHERE job_id = ? AND claim_seq = ? AND line = ? AND "+s.textEq("message"),
			s.long(string(r.New)), s.id(r.JobID), r.ClaimSeq, int64(r.Line), s.long(string(r.Value)))
	default:
		return Statement{}, fmt.Errorf("rewrite of unknown column %q of job %s", r.Column, r.JobID)
	}
	return Statement{q, args}, nil
}

// textEq is the condition that a long text column col holds exactly the
// text of the next argument (Oracle compares its CLOBs as it compares
// BLOBs).
func (s *Syntax) textEq(col string) string {
	if s.BlobEq != nil {
		return s.BlobEq(col)
	}
	return col + " = ?"
}

// rewriteStatements are the rewriter's statements, by golden file name.
func (s *Syntax) rewriteStatements() map[string]string {
	text := func(q string, _ []any) string { return q }
	v := func(c spi.ValueColumn) spi.ValueRewrite {
		return spi.ValueRewrite{StoredValue: spi.StoredValue{Column: c, Namespace: "n", Value: []byte("a")}, New: []byte("b")}
	}
	two := make([]uuid.UUID, 2)
	m := map[string]string{
		"rewrite_values":     text(s.valuesPage("{job}", uuid.Nil, 10)),
		"rewrite_states":     text(s.statesOf("{state}", two)),
		"rewrite_logs":       text(s.logsOf(two)),
		"rewrite_signals":    text(s.signalsOf(two)),
		"rewrite_conditions": text(s.conditionsOf(two)),
	}
	for _, c := range []spi.ValueColumn{spi.ColumnPayload, spi.ColumnResult, spi.ColumnState, spi.ColumnLog, spi.ColumnSignal, spi.ColumnCondition} {
		r := v(c)
		if c == spi.ColumnCondition {
			r.Namespace = uuid.Nil.String()
		}
		st, _ := s.rewrite(r)
		m["rewrite_"+string(c)] = st.SQL
		r.Archived = true
		if st, _ = s.rewrite(r); c == spi.ColumnPayload || c == spi.ColumnResult || c == spi.ColumnState {
			m["rewrite_archived_"+string(c)] = st.SQL
		}
	}
	return m
}
