package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// BenchmarkRunTask is the cost of running a no-op job's task: plain, a
// protected task with breaking disabled (the same path: no allocation
// more), and through the built-in breaker.
func BenchmarkRunTask(b *testing.B) {
	plain := ratchet.NewVoidTask("t", func(context.Context, int) error { return nil })
	guarded := func() ratchet.Definition {
		return ratchet.NewVoidTask("t", func(context.Context, int) error { return nil }).ProtectedBy("svc", spi.ErrorFilter{})
	}
	for _, c := range []struct {
		name string
		task ratchet.Definition
		o    Options
	}{
		{"plain", plain, Options{}},
		{"protected-disabled", guarded(), Options{Breakers: BreakerOptions{Disabled: true}}},
		{"protected", guarded(), Options{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			e, err := New(memory.New(), c.o, c.task)
			if err != nil {
				b.Fatal(err)
			}
			j := &spi.Job{TaskName: "t", Payload: []byte("1")}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.runner.run(ctx, j); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDisabledBreakerAllocatesNothing checks the benchmark's claim: a
// protected task with breaking disabled allocates what a plain one does.
func TestDisabledBreakerAllocatesNothing(t *testing.T) {
	run := func(task ratchet.Definition, o Options) float64 {
		e, err := New(memory.New(), o, task)
		if err != nil {
			t.Fatal(err)
		}
		j := &spi.Job{TaskName: "t", Payload: []byte("1")}
		return testing.AllocsPerRun(200, func() { _, _ = e.runner.run(context.Background(), j) })
	}
	plain := run(ratchet.NewVoidTask("t", func(context.Context, int) error { return nil }), Options{})
	off := run(ratchet.NewVoidTask("t", func(context.Context, int) error { return nil }).ProtectedBy("svc", spi.ErrorFilter{}),
		Options{Breakers: BreakerOptions{Disabled: true}})
	if off != plain {
		t.Fatalf("a protected task with breaking disabled allocates %v per run, a plain one %v", off, plain)
	}
}

// flakyClaims fails its claims while down, and counts them.
type flakyClaims struct {
	mu    sync.Mutex
	down  bool
	calls int
}

func (f *flakyClaims) ClaimJobs(context.Context, spi.ClaimParams) ([]*spi.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.down {
		return nil, errors.New("connection refused")
	}
	return nil, nil
}

func (f *flakyClaims) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

type claimAgain struct{}

func (claimAgain) Next(spi.PollResult) time.Duration { return 0 }

// The poller breaker stops the claims while the store keeps failing them,
// and lets a trial claim through once its wait is over.
func TestPollerBreakerStopsClaims(t *testing.T) {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	var states []string
	metrics := pollerStates{record: func(s string) { mu.Lock(); states = append(states, s); mu.Unlock() }}
	o := Options{
		Client:   ratchet.ClientOptions{Metrics: metrics, Logger: slog.New(slog.DiscardHandler)},
		NodeID:   "n1",
		Breakers: BreakerOptions{Config: spi.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitDuration: time.Minute, PermittedCallsInHalfOpen: 1}},
	}
	b, err := pollerBreaker(o)
	require.NoError(t, err)
	store := &flakyClaims{down: true}
	p := newPoller(pollerDeps{clock: clock, log: o.Client.Logger, strategy: claimAgain{},
		claims: nodecore.ClaimerDeps{Store: store, Clock: clock, Log: o.Client.Logger, Breaker: b, Dispatch: func(*spi.Job) {}}})
	require.True(t, p.claim(ctx, 1))
	require.True(t, p.claim(ctx, 1))
	assert.Equal(t, 2, store.count())
	done := make(chan bool)
	go func() { done <- p.claim(ctx, 1) }()
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "open: the poller waits instead of claiming")
	assert.Equal(t, 2, store.count(), "no claim while open")
	store.mu.Lock()
	store.down = false
	store.mu.Unlock()
	clock.Advance(time.Minute)
	require.True(t, <-done)
	require.True(t, p.claim(ctx, 1), "half-open: a trial claim")
	assert.Equal(t, 3, store.count())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"OPEN", "HALF_OPEN", "CLOSED"}, states)

	off, err := pollerBreaker(Options{Breakers: BreakerOptions{Disabled: true}})
	require.NoError(t, err)
	assert.Nil(t, off, "no poller breaker when breaking is off")
}

type pollerStates struct {
	spi.NoOpMetrics
	record func(string)
}

func (m pollerStates) PollerBreakerState(_ context.Context, _, state string) { m.record(state) }

// While the poller breaker is open, one claim a poll interval probes the
// store: the probes fail while it is down (no more than one a second), and
// the first after it answers again closes the breaker at once, without
// waiting out the breaker's minute.
func TestPollerBreakerProbesAndClosesOnTheStoresReturn(t *testing.T) {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	var states []string
	metrics := pollerStates{record: func(s string) { mu.Lock(); states = append(states, s); mu.Unlock() }}
	o := Options{
		Client:   ratchet.ClientOptions{Metrics: metrics, Logger: slog.New(slog.DiscardHandler)},
		NodeID:   "n1",
		Breakers: BreakerOptions{Config: spi.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitDuration: time.Minute}},
	}
	b, err := pollerBreaker(o)
	require.NoError(t, err)
	store := &flakyClaims{down: true}
	p := newPoller(pollerDeps{clock: clock, log: o.Client.Logger, strategy: claimAgain{},
		claims: nodecore.ClaimerDeps{Store: store, Clock: clock, Log: o.Client.Logger, Breaker: b, ProbeEvery: time.Second, Dispatch: func(*spi.Job) {}}})
	require.True(t, p.claim(ctx, 1))
	require.True(t, p.claim(ctx, 1))
	require.Equal(t, 2, store.count())
	require.True(t, p.claim(ctx, 1), "open: the first probe goes at once")
	require.Equal(t, 3, store.count())

	// waitThenClaim lets the poller's wait of the open breaker run out one
	// poll interval later, then claims.
	waitThenClaim := func() {
		t.Helper()
		done := make(chan bool)
		go func() { done <- p.claim(ctx, 1) }()
		require.NoError(t, clock.BlockUntilContext(ctx, 1), "open: the poller waits for the next probe")
		clock.Advance(999 * time.Millisecond)
		select {
		case <-done:
			t.Fatal("the wait ended before the poll interval")
		default:
		}
		clock.Advance(time.Millisecond)
		require.True(t, <-done)
		require.True(t, p.claim(ctx, 1), "the probe")
	}
	for i := range 3 {
		waitThenClaim()
		assert.Equal(t, 4+i, store.count(), "one probe a poll interval while the store is down")
	}
	assert.Equal(t, breaker.Open, b.State(clock.Now()))
	store.mu.Lock()
	store.down = false
	store.mu.Unlock()
	waitThenClaim()
	assert.Equal(t, breaker.Closed, b.State(clock.Now()), "the probe that succeeded closed the breaker")
	require.True(t, p.claim(ctx, 1), "claims go on at once")
	assert.Equal(t, 8, store.count())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"OPEN", "CLOSED"}, states, "no HALF_OPEN minute")
}
