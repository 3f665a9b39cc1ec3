package storetest

import (
	"context"
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// T0 is the synthetic "now" of the store tests.
var T0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

var idSeq atomic.Uint64

// NewID returns a fresh UUIDv7-shaped id whose order follows the call
// order.
func NewID() uuid.UUID {
	n := idSeq.Add(1)
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[0:8], uint64(T0.UnixMilli())<<16|0x7000)
	binary.BigEndian.PutUint64(u[8:16], n)
	u[6] = 0x70
	u[8] = (u[8] & 0x3f) | 0x80
	return u
}

// Job returns a PENDING job of task send-email due at due, with the
// client's defaults.
func Job(prio spi.Priority, due time.Time) *spi.Job {
	return &spi.Job{
		ID:           NewID(),
		TaskName:     "send-email",
		Payload:      []byte(`{"to":"a@example.com"}`),
		Status:       spi.StatusPending,
		Priority:     prio,
		ScheduledAt:  due,
		CreatedAt:    T0.Add(-time.Hour),
		MaxRetries:   3,
		Backoff:      spi.BackoffExponential,
		BackoffParam: time.Second,
	}
}

// Insert inserts jobs, none of them a duplicate.
func Insert(t testing.TB, s spi.Store, jobs ...*spi.Job) {
	t.Helper()
	res, err := s.InsertJobs(context.Background(), jobs, spi.InsertOptions{})
	require.NoError(t, err)
	require.Len(t, res, len(jobs))
	for i, r := range res {
		require.False(t, r.Duplicate)
		require.Equal(t, jobs[i].ID, r.ID)
	}
}

// Get reads a job that exists.
func Get(t testing.TB, s spi.Store, id uuid.UUID) *spi.Job {
	t.Helper()
	j, err := s.GetJob(context.Background(), id)
	require.NoError(t, err)
	return j
}

// Claim claims up to limit jobs of any task for node at now.
func Claim(t testing.TB, s spi.Store, node string, limit int, now time.Time, boost time.Duration) []*spi.Job {
	t.Helper()
	jobs, err := s.ClaimJobs(context.Background(), spi.ClaimParams{NodeID: node, Limit: limit, Now: now, BoostInterval: boost})
	require.NoError(t, err)
	return jobs
}

// IDs returns the ids of jobs, in order.
func IDs(jobs []*spi.Job) []uuid.UUID {
	out := make([]uuid.UUID, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// Ref is the claim of a claimed job.
func Ref(j *spi.Job) spi.ClaimRef { return spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq} }
