package sqlcore

import (
	"context"
	"database/sql"
	"fmt"

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
		q, args := s.limited("SELECT job_id, payload, job_result FROM "+jobT+" WHERE job_id > ? ORDER BY job_id", int64(limit+1), s.id(after))
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
			q, args := s.SQL("SELECT job_id, namespace, state_json FROM "+stateT+" WHERE job_id IN (?) ORDER BY job_id, namespace", s.ids(ids))
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
			q, args = s.SQL("SELECT job_id, claim_seq, line, message FROM {log} WHERE job_id IN (?) ORDER BY job_id, claim_seq, line", s.ids(ids))
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
			for _, v := range append(states, lines...) {
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
	m := map[string]string{
		"rewrite_values": text(s.limited("SELECT job_id, payload, job_result FROM {job} WHERE job_id > ? ORDER BY job_id", 10, s.id(uuid.Nil))),
		"rewrite_states": text(s.SQL("SELECT job_id, namespace, state_json FROM {state} WHERE job_id IN (?) ORDER BY job_id, namespace", s.ids(make([]uuid.UUID, 2)))),
		"rewrite_logs":   text(s.SQL("SELECT job_id, claim_seq, line, message FROM {log} WHERE job_id IN (?) ORDER BY job_id, claim_seq, line", s.ids(make([]uuid.UUID, 2)))),
	}
	for _, c := range []spi.ValueColumn{spi.ColumnPayload, spi.ColumnResult, spi.ColumnState, spi.ColumnLog} {
		st, _ := s.rewrite(v(c))
		m["rewrite_"+string(c)] = st.SQL
		a := v(c)
		a.Archived = true
		if st, _ = s.rewrite(a); c != spi.ColumnLog {
			m["rewrite_archived_"+string(c)] = st.SQL
		}
	}
	return m
}
