package sqlite

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// t0 is the synthetic "now" of most tests.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

var idSeq atomic.Uint64

// newID returns a fresh UUIDv7-shaped id whose order follows the call order.
func newID() uuid.UUID {
	n := idSeq.Add(1)
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[0:8], uint64(t0.UnixMilli())<<16|0x7000)
	binary.BigEndian.PutUint64(u[8:16], n)
	u[6] = 0x70
	u[8] = (u[8] & 0x3f) | 0x80
	return u
}

func dbPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "ratchet.db")
}

func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func openStore(t *testing.T) *Store {
	t.Helper()
	return openAt(t, dbPath(t))
}

// job returns a PENDING job due at due, with the client's defaults.
func job(prio spi.Priority, due time.Time) *spi.Job {
	return &spi.Job{
		ID:           newID(),
		TaskName:     "send-email",
		Payload:      []byte(`{"to":"a@example.com"}`),
		Status:       spi.StatusPending,
		Priority:     prio,
		ScheduledAt:  due,
		CreatedAt:    t0.Add(-time.Hour),
		MaxRetries:   3,
		Backoff:      spi.BackoffExponential,
		BackoffParam: time.Second,
	}
}

func insert(t *testing.T, s *Store, jobs ...*spi.Job) {
	t.Helper()
	res, err := s.InsertJobs(context.Background(), jobs)
	require.NoError(t, err)
	require.Len(t, res, len(jobs))
	for i, r := range res {
		require.False(t, r.Duplicate)
		require.Equal(t, jobs[i].ID, r.ID)
	}
}

func get(t *testing.T, s *Store, id uuid.UUID) *spi.Job {
	t.Helper()
	j, err := s.GetJob(context.Background(), id)
	require.NoError(t, err)
	return j
}

func claim(t *testing.T, s *Store, node string, limit int, now time.Time, boost time.Duration) []*spi.Job {
	t.Helper()
	jobs, err := s.ClaimJobs(context.Background(), spi.ClaimParams{NodeID: node, Limit: limit, Now: now, BoostInterval: boost})
	require.NoError(t, err)
	return jobs
}

func ids(jobs []*spi.Job) []uuid.UUID {
	out := make([]uuid.UUID, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func ref(j *spi.Job) spi.ClaimRef { return spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq} }

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
