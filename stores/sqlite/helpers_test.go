package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/tck/storetest"
)

// The job helpers shared with the other stores' tests.
var (
	t0     = storetest.T0
	newID  = storetest.NewID
	job    = storetest.Job
	insert = storetest.Insert
	get    = storetest.Get
	claim  = storetest.Claim
	ids    = storetest.IDs
	ref    = storetest.Ref
)

func dbPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "ratchet.db")
}

func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Options{Create: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func openStore(t *testing.T) *Store {
	t.Helper()
	return openAt(t, dbPath(t))
}

// exec runs raw SQL on the store's database.
func exec(t *testing.T, s *Store, q string, args ...any) {
	t.Helper()
	_, err := s.db.Exec(q, args...)
	require.NoError(t, err)
}

// claimedJob inserts one job and claims it for node "owner" at t0.
func claimedJob(t *testing.T, s *Store) *spi.Job {
	t.Helper()
	j := job(spi.PriorityNormal, t0)
	insert(t, s, j)
	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{NodeID: "owner", Limit: 1, Now: t0})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, j.ID, got[0].ID)
	return got[0]
}
