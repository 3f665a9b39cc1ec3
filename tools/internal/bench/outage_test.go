package bench

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// downStore fails every listing and lease while down: the watch writes a
// lease where the store has leases.
type downStore struct {
	spi.Store
	down atomic.Bool
}

func (s *downStore) ListJobs(ctx context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	if s.down.Load() {
		return nil, uuid.Nil, errors.New("connection refused")
	}
	return s.Store.ListJobs(ctx, p)
}

func (s *downStore) TryAcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	if s.down.Load() {
		return false, errors.New("database is locked")
	}
	return spi.CapabilitiesOf(s.Store).Leases.TryAcquireLease(ctx, name, owner, ttl, now)
}

// The watch tells when the store stopped and started answering, and the
// first job worked after that; the summary says how long the node took.
func TestOutageWatchTellsTheResume(t *testing.T) {
	store := &downStore{Store: memory.New()}
	w := watchOutages(context.Background(), store, time.Millisecond, io.Discard)
	w.worked(time.Now()) // no outage: nothing to say
	store.down.Store(true)
	require.Eventually(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return len(w.outages) == 1 }, 10*time.Second, time.Millisecond)
	store.down.Store(false)
	require.Eventually(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.pending }, 10*time.Second, time.Millisecond)
	resumed := time.Now().Add(1500 * time.Millisecond)
	w.worked(resumed)
	w.worked(resumed.Add(time.Second)) // only the first job after the return counts
	outages := w.stop()
	require.Len(t, outages, 1)
	o := outages[0]
	assert.True(t, o.Down.Before(o.Answered))
	assert.Equal(t, resumed, o.Resumed)
	assert.InDelta(t, 1.5, o.ResumedAfter().Seconds(), 0.1)
	r := Result{Mode: ModeBurndown, Jobs: 10, InsertTime: time.Second, WorkTime: time.Second, Outages: outages}
	assert.Contains(t, r.Summary(), "resumed 1.5 s after it answered")
	w.stop() // again: no effect
}
