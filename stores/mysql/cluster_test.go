package mysql

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestClusterRowsFollowTheirJob: deleting a job (archiving, later) deletes
// its state and properties.
func TestClusterRowsFollowTheirJob(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	j := job(spi.PriorityNormal, t0)
	insert(t, s, j)
	require.NoError(t, s.PutProperty(ctx, j.ID, "k", "v"))
	_, err := s.InitStateUnfenced(ctx, j.ID, "ns", []byte(`{}`))
	require.NoError(t, err)
	exec(t, s, `DELETE FROM `+table(s, "job")+` WHERE job_id = ?`, j.ID[:])
	for _, table := range []string{"scheduler_job_state", "scheduler_job_property", "scheduler_job_tag"} {
		var n int
		require.NoError(t, s.db.QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM %s.%s", quoteIdent(s.database), table)).Scan(&n))
		assert.Zero(t, n, table)
	}
}

func TestCapabilitiesAfterClose(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Close())
	_, err := s.CheckClaims(ctx, nil)
	require.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.TryAcquireLease(ctx, "l", "o", time.Minute, t0)
	require.ErrorIs(t, err, spi.ErrClosed)
	require.ErrorIs(t, s.ReleaseLease(ctx, "l", "o"), spi.ErrClosed)
	_, _, err = s.GetState(ctx, uuid.New(), "ns")
	require.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.InitStateUnfenced(ctx, uuid.New(), "ns", nil)
	require.ErrorIs(t, err, spi.ErrClosed)
	require.ErrorIs(t, s.PutProperty(ctx, uuid.New(), "k", "v"), spi.ErrClosed)
	_, err = s.FindJobsByProperty(ctx, "k", "v", 1)
	require.ErrorIs(t, err, spi.ErrClosed)
}
