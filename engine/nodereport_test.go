package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// TestHeartbeatWritesTheNodeReport checks that the node's heartbeats carry
// its report (spi.NodeReportStore): the SDK's version, the concurrency,
// the jobs running at the heartbeat, the start time and the breakers.
func TestHeartbeatWritesTheNodeReport(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	store := memory.New()
	started, release := make(chan struct{}, 1), make(chan struct{})
	task := ratchet.NewVoidTask("block", func(ctx context.Context, a args) error {
		started <- struct{}{}
		<-release
		return nil
	})
	eng, err := engine.New(store, engine.Options{NodeID: "n1", Concurrency: 3,
		Client: ratchet.ClientOptions{Clock: clock, Logger: quiet}}, task)
	require.NoError(t, err)
	require.NoError(t, eng.Start(context.Background()))
	defer func() {
		close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = eng.Stop(ctx)
	}()
	ctx := context.Background()
	report := func() *spi.NodeReport {
		nodes, err := store.LiveNodes(ctx, t0)
		require.NoError(t, err)
		require.Len(t, nodes, 1)
		return nodes[0].Report
	}

	// Start registers the node with its first report.
	r := report()
	require.NotNil(t, r, "the registration carries the report")
	assert.Equal(t, "(devel)", r.Version, "the SDK's version: a build inside the repository")
	assert.Equal(t, 3, r.Concurrency)
	assert.Equal(t, 0, r.Running)
	assert.True(t, r.StartedAt.Equal(t0), "the start time: %s", r.StartedAt)
	require.NotEmpty(t, r.Breakers, "the poller breaker")
	assert.Equal(t, spi.NodeBreaker{Service: "n1", Poller: true, State: "CLOSED",
		FailureRateThreshold: eng.Breakers()[0].Config.FailureRateThreshold, SlidingWindowSize: eng.Breakers()[0].Config.SlidingWindowSize,
		MinimumCalls: eng.Breakers()[0].Config.MinimumCalls, WaitDuration: eng.Breakers()[0].Config.WaitDuration,
		PermittedCallsInHalfOpen: eng.Breakers()[0].Config.PermittedCallsInHalfOpen}, r.Breakers[0])

	// A running job shows at the next heartbeat.
	_, err = task.Submit(ctx, eng.Client(), args{})
	require.NoError(t, err)
	eng.NotifyNewWork(ratchet.PriorityNormal)
	waitFor(t, started, "the body to start")
	clock.Advance(engine.DefaultHeartbeatInterval)
	require.Eventually(t, func() bool { r := report(); return r != nil && r.Running == 1 },
		5*time.Second, time.Millisecond, "the heartbeat after the start reports one running job")
	assert.True(t, report().StartedAt.Equal(t0), "the start time stays")
}
