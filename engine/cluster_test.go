package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// node starts an engine on a shared store and clock.
func node(t *testing.T, s spi.Store, clock clockwork.Clock, opts engine.Options, tasks ...ratchet.Definition) (*engine.Engine, <-chan engine.Event) {
	t.Helper()
	opts.Client.Clock, opts.Client.Logger = clock, quiet
	e, err := engine.New(s, opts, tasks...)
	require.NoError(t, err)
	ev, unsub := e.Subscribe(10000)
	require.NoError(t, e.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
		unsub()
	})
	return e, ev
}

func TestTagAffinityAndClusterWakeups(t *testing.T) {
	s := memory.New()
	clock := clockwork.NewFakeClockAt(t0)
	coord := engine.NewLocalCoordinator()
	task := ratchet.NewVoidTask("render", func(ctx context.Context, a args) error { return nil })
	cpu, cpuEvents := node(t, s, clock, engine.Options{NodeID: "cpu", Tags: spi.TagFilter{None: []string{"gpu"}}, Coordinator: coord}, task)
	_, gpuEvents := node(t, s, clock, engine.Options{NodeID: "gpu", Tags: spi.TagFilter{All: []string{"gpu"}}, Coordinator: coord}, task)
	ctx := context.Background()

	// Submitted through the CPU node: only the GPU node may run it, and the
	// fake clock never moves, so only the cluster wakeup gets it there.
	id, err := task.Submit(ctx, cpu.Client(), args{N: 1}, ratchet.WithTags("gpu"))
	require.NoError(t, err)
	ev := <-gpuEvents
	assert.Equal(t, id, ev.JobID)
	assert.Equal(t, engine.EventSucceeded, ev.Kind)
	j, err := s.GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "gpu", j.OwnerNode)

	id, err = task.Submit(ctx, cpu.Client(), args{N: 2})
	require.NoError(t, err)
	ev = <-cpuEvents
	assert.Equal(t, id, ev.JobID)
	select {
	case ev := <-gpuEvents:
		t.Fatalf("the GPU node ran an untagged job: %+v", ev)
	default:
	}
}

func TestResourcePermitsAcrossNodes(t *testing.T) {
	s := memory.New()
	coord := engine.NewLocalCoordinator()
	var running, peak atomic.Int32
	task := ratchet.NewVoidTask("export", func(ctx context.Context, a args) error {
		cur := running.Add(1)
		for p := peak.Load(); cur > p && !peak.CompareAndSwap(p, cur); p = peak.Load() {
		}
		defer running.Add(-1)
		// Simulated work: hold the permit a moment so that holders overlap
		// and over-admission would show in the peak.
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	})
	var events []<-chan engine.Event
	var first *engine.Engine
	for _, id := range []string{"a", "b", "c"} {
		e, ev := node(t, s, clockwork.NewRealClock(), engine.Options{NodeID: id, Concurrency: 10, Coordinator: coord,
			MinPollInterval: time.Millisecond, PollInterval: 5 * time.Millisecond}, task)
		events = append(events, ev)
		if first == nil {
			first = e
		}
	}
	ids, err := task.SubmitMany(context.Background(), first.Client(), make([]args, 50), ratchet.WithResource("printer", 2))
	require.NoError(t, err)
	done := 0
	for done < len(ids) {
		select {
		case <-events[0]:
			done++
		case <-events[1]:
			done++
		case <-events[2]:
			done++
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of %d jobs finished", done, len(ids))
		}
	}
	assert.LessOrEqual(t, peak.Load(), int32(2), "never more than 2 holders of the printer")
	assert.Equal(t, int32(2), peak.Load(), "holders overlapped: the limit was reached")
}

func TestRecoveredJobIsCancelledAndItsWriteSuperseded(t *testing.T) {
	s := memory.New()
	clock := clockwork.NewFakeClockAt(t0)
	started := make(chan struct{})
	var calls atomic.Int32
	task := ratchet.NewVoidTask("long", func(ctx context.Context, a args) error {
		if calls.Add(1) > 1 {
			return nil // the redelivery finishes at once
		}
		close(started)
		<-ctx.Done()
		return ctx.Err()
	})
	e, events := node(t, s, clock, engine.Options{NodeID: "stalled", HeartbeatInterval: 10 * time.Second}, task)
	ctx := context.Background()
	id, err := task.Submit(ctx, e.Client(), args{})
	require.NoError(t, err)
	<-started
	// Another node decides "stalled" is dead and recovers its job.
	rec, err := s.RecoverOrphans(ctx, spi.RecoverParams{Now: t0, Grace: time.Minute, MaxCrashRedeliveries: 3, Nodes: []string{"stalled"}})
	require.NoError(t, err)
	require.Len(t, rec, 1)
	// At its next heartbeat the node finds out and stops the stale body; the
	// job, PENDING again, is claimed anew (here by the same node) and runs.
	require.NoError(t, clock.BlockUntilContext(ctx, 3))
	clock.Advance(10 * time.Second)
	kinds := map[engine.EventKind]int{}
	for kinds[engine.EventSuperseded] == 0 || kinds[engine.EventSucceeded] == 0 {
		ev := <-events
		require.Equal(t, id, ev.JobID)
		kinds[ev.Kind]++
		e.NotifyNewWork(0)
	}
	assert.Equal(t, map[engine.EventKind]int{engine.EventSuperseded: 1, engine.EventSucceeded: 1}, kinds)
	j, err := s.GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusSucceeded, j.Status)
	assert.Equal(t, 1, j.CrashCount)
	assert.Zero(t, j.Attempts, "the stale failure was not written")
	assert.Equal(t, int32(2), calls.Load())
}

func TestStartupCoordinatorLeases(t *testing.T) {
	s := memory.New()
	clock := clockwork.NewFakeClockAt(t0)
	task := ratchet.NewVoidTask("x", func(ctx context.Context, a args) error { return nil })
	a, _ := node(t, s, clock, engine.Options{NodeID: "a"}, task)
	b, _ := node(t, s, clock, engine.Options{NodeID: "b"}, task)
	ca, err := a.StartupCoordinator()
	require.NoError(t, err)
	cb, err := b.StartupCoordinator()
	require.NoError(t, err)
	ctx := context.Background()

	ok, err := ca.TryAcquire(ctx, "archiver", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = cb.TryAcquire(ctx, "archiver", time.Minute)
	require.NoError(t, err)
	assert.False(t, ok, "held by a")
	ok, err = ca.TryAcquire(ctx, "archiver", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "a renews its own lease")

	clock.Advance(61 * time.Second)
	ok, err = cb.TryAcquire(ctx, "archiver", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "an expired lease can be taken over")
	require.NoError(t, ca.Release(ctx, "archiver"), "releasing a lease one does not hold does nothing")
	ok, err = ca.TryAcquire(ctx, "archiver", time.Minute)
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, cb.Release(ctx, "archiver"))
	ok, err = ca.TryAcquire(ctx, "archiver", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok)
}
