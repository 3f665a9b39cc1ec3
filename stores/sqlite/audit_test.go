package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestAuditSeqSurvivesReopen checks that an audit Seq is never given again,
// even when every entry was deleted and the database reopened: the seq is
// an AUTOINCREMENT key, whose high-water mark SQLite keeps in the file
// (a plain INTEGER PRIMARY KEY would give the deleted numbers again).
func TestAuditSeqSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := openAt(t, path)
	var last spi.AuditEntry
	for range 3 {
		var err error
		last, err = s.AppendAudit(ctx, spi.AuditEntry{Time: t0, Actor: "ops", Action: "jobs.retry"})
		require.NoError(t, err)
	}
	n, err := s.DeleteAudit(ctx, t0.Add(time.Second), 0)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.NoError(t, s.Close())

	s = openAt(t, path)
	next, err := s.AppendAudit(ctx, spi.AuditEntry{Time: t0, Actor: "ops", Action: "jobs.cancel"})
	require.NoError(t, err)
	assert.Greater(t, next.Seq, last.Seq, "a Seq is never given again")
}
