package sqlserver

import (
	"context"
	"database/sql/driver"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestAuditLogAgainstTheFake runs the audit log's methods against the
// fake: the append's INSERT returns its identity as a row (OUTPUT
// INSERTED.seq), an empty target or detail is bound as NULL and read back
// as "", and the deletion reads the oldest seqs, then deletes them by
// primary key.
func TestAuditLogAgainstTheFake(t *testing.T) {
	ctx := context.Background()
	f := &fakeDB{}
	var inserted []driver.NamedValue
	row := func(cols []string, rows ...[]driver.Value) fakeResult {
		return fakeResult{Sets: []fakeSet{{Cols: cols, Rows: rows}}}
	}
	f.Handler = func(q string, args []driver.NamedValue) (fakeResult, error) {
		switch {
		case strings.HasPrefix(q, "INSERT INTO scheduler_audit"):
			inserted = args
			return row([]string{"seq"}, []driver.Value{int64(42)}), nil
		case strings.HasPrefix(q, "SELECT TOP (@p1) seq, audit_time"):
			return row([]string{"seq", "audit_time", "actor", "audit_action", "target", "audit_count", "detail"},
				[]driver.Value{int64(42), t0, "ops", "jobs.retry", "job 1", int64(3), nil}), nil
		case strings.HasPrefix(q, "SELECT TOP (@p1) seq FROM"):
			return row([]string{"seq"}, []driver.Value{int64(7)}, []driver.Value{int64(9)}), nil
		}
		return fakeResult{Affected: 2}, nil
	}
	s := fakeStore(t, f, Options{})

	e, err := s.AppendAudit(ctx, spi.AuditEntry{Time: t0.Add(time.Nanosecond), Actor: "ops", Action: "jobs.retry", Target: "job 1", Count: 3})
	require.NoError(t, err)
	assert.Equal(t, spi.AuditEntry{Seq: 42, Time: t0, Actor: "ops", Action: "jobs.retry", Target: "job 1", Count: 3}, e)
	require.Len(t, inserted, 6)
	assert.Equal(t, t0, argTime(inserted[0].Value))
	assert.Nil(t, inserted[5].Value, "an empty detail is NULL")
	assert.Equal(t, []string{"BEGIN", "INSERT INTO scheduler_audit (audit_time, actor, audit_action, target, audit_count, detail) OUTPUT INSERTED.seq VALUES (@p1, @p2, @p3, @p4, @p5, @p6)", "COMMIT"}, f.Statements())

	f.Reset()
	_, err = s.AppendAudit(ctx, spi.AuditEntry{Actor: "ops", Action: "x", Count: -1})
	assert.ErrorContains(t, err, "audit entry: Count -1 is negative")
	assert.Empty(t, f.Statements(), "a refused entry writes nothing")

	f.Reset()
	es, err := s.ListAudit(ctx, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, []spi.AuditEntry{{Seq: 42, Time: t0, Actor: "ops", Action: "jobs.retry", Target: "job 1", Count: 3}}, es)
	assert.Equal(t, []string{"SELECT TOP (@p1) seq, audit_time, actor, audit_action, target, audit_count, detail FROM scheduler_audit ORDER BY seq DESC"}, f.Statements())

	f.Reset()
	n, err := s.DeleteAudit(ctx, t0, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, []string{"BEGIN", "SELECT TOP (@p1) seq FROM scheduler_audit WHERE audit_time < @p2 ORDER BY audit_time, seq",
		"DELETE FROM scheduler_audit WHERE seq IN (@p1, @p2) AND audit_time < @p3", "COMMIT"}, f.Statements())
}
