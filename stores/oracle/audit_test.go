package oracle

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestAuditLogAgainstTheFake runs the audit log's methods against the
// fake: the append's INSERT hands its seq back through an output bind
// (RETURNING seq INTO, an Oracle INSERT returning no rows), an empty
// target or detail is bound as NULL and read back as "", and the deletion
// reads the oldest seqs, then deletes them by primary key.
func TestAuditLogAgainstTheFake(t *testing.T) {
	ctx := context.Background()
	f := &fakeDB{}
	var inserted []driver.NamedValue
	f.Handler = func(q string, args []driver.NamedValue) (fakeResult, error) {
		switch {
		case strings.HasPrefix(q, "INSERT INTO scheduler_audit"):
			inserted = args
			out, ok := args[len(args)-1].Value.(sql.Out)
			require.True(t, ok, "the last bind is the seq's output: %T", args[len(args)-1].Value)
			*out.Dest.(*int64) = 42
			return fakeResult{Affected: 1}, nil
		case strings.HasPrefix(q, "SELECT seq, audit_time"):
			return fakeResult{Sets: []fakeSet{{Cols: []string{"seq", "audit_time", "actor", "audit_action", "target", "audit_count", "detail"},
				Rows: [][]driver.Value{{int64(42), t0, "ops", "jobs.retry", nil, int64(3), "ok"}}}}}, nil
		case strings.HasPrefix(q, "SELECT seq FROM"):
			return fakeResult{Sets: []fakeSet{{Cols: []string{"seq"}, Rows: [][]driver.Value{{int64(7)}, {int64(9)}}}}}, nil
		}
		return fakeResult{Affected: 2}, nil
	}
	s := fakeStore(t, f, Options{})

	e, err := s.AppendAudit(ctx, spi.AuditEntry{Time: t0.Add(time.Nanosecond), Actor: "ops", Action: "jobs.retry", Count: 3, Detail: "ok"})
	require.NoError(t, err)
	assert.Equal(t, spi.AuditEntry{Seq: 42, Time: t0, Actor: "ops", Action: "jobs.retry", Count: 3, Detail: "ok"}, e)
	require.Len(t, inserted, 7)
	assert.Equal(t, t0, argTime(inserted[0].Value))
	assert.Nil(t, inserted[3].Value, "an empty target is NULL")
	assert.Equal(t, []string{"BEGIN", "INSERT INTO scheduler_audit (audit_time, actor, audit_action, target, audit_count, detail) VALUES (:1, :2, :3, :4, :5, :6) RETURNING seq INTO :7", "COMMIT"}, f.Statements())

	f.Reset()
	_, err = s.AppendAudit(ctx, spi.AuditEntry{Actor: "ops"})
	assert.ErrorContains(t, err, "audit entry: Action is empty")
	assert.Empty(t, f.Statements(), "a refused entry writes nothing")

	f.Reset()
	es, err := s.ListAudit(ctx, 50, 0)
	require.NoError(t, err)
	assert.Equal(t, []spi.AuditEntry{{Seq: 42, Time: t0, Actor: "ops", Action: "jobs.retry", Count: 3, Detail: "ok"}}, es)
	assert.Equal(t, []string{"SELECT seq, audit_time, actor, audit_action, target, audit_count, detail FROM scheduler_audit WHERE seq < :1 ORDER BY seq DESC FETCH FIRST :2 ROWS ONLY"}, f.Statements())

	f.Reset()
	n, err := s.DeleteAudit(ctx, t0, 10)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, []string{"BEGIN", "SELECT seq FROM scheduler_audit WHERE audit_time < :1 ORDER BY audit_time, seq FETCH FIRST :2 ROWS ONLY",
		"DELETE FROM scheduler_audit WHERE seq IN (:1, :2) AND audit_time < :3", "COMMIT"}, f.Statements())
}
