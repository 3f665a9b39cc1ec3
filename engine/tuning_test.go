package engine_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// A task's limit bounds its jobs running at once on the node; other
// tasks use the rest of the slots; nothing over the limit is charged.
func TestTaskLimitsBoundATask(t *testing.T) {
	ctx := context.Background()
	var running, peak atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, 10)
	slow := ratchet.NewVoidTask("report", func(context.Context, int) error {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		started <- struct{}{}
		<-release
		running.Add(-1)
		return nil
	})
	fast := ratchet.NewVoidTask("ping", func(context.Context, int) error { return nil })
	// The first claim takes the six reports (room for ten) and gives four
	// back, not charged; the next claims leave the full task out.
	r := start(t, engine.Options{Concurrency: 10, TaskTuning: engine.TaskLimits{"report": 2}}, slow, fast)
	var reports []uuid.UUID
	for i := range 6 {
		id, err := slow.Submit(ctx, r.client, i)
		require.NoError(t, err)
		reports = append(reports, id)
	}
	<-started
	<-started
	ping, err := fast.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(ping).Kind, "another task runs beside the limited one")
	assert.Equal(t, int32(2), running.Load(), "two reports run, the limit")
	close(release)
	for range 4 {
		<-started
	}
	for _, id := range reports {
		require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
		assert.Equal(t, 0, r.job(id).Attempts)
	}
	assert.Equal(t, int32(2), peak.Load(), "never more than two at once")
}
