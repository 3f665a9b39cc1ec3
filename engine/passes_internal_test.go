package engine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pass runs at once and at every tick; a full batch runs again at once;
// a pass's error ends the loop with it; the end of ctx ends it with nil.
func TestPassEvery(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	h := ServiceHost{Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	passes := make(chan time.Time, 10)
	more := 2 // the first call finds two full batches
	boom := errors.New("store down")
	var fail atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- passEvery(ctx, h, time.Second, func(now time.Time) (bool, error) {
			passes <- now
			if fail.Load() {
				return false, boom
			}
			more--
			return more >= 0, nil
		})
	}()
	start := clock.Now()
	for range 3 {
		assert.Equal(t, start, <-passes, "at once, and again at once after each full batch")
	}
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	clock.Advance(time.Second)
	assert.Equal(t, start.Add(time.Second), <-passes, "then at the tick")
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	fail.Store(true) // read by the pass of the next tick
	clock.Advance(time.Second)
	<-passes
	assert.ErrorIs(t, <-done, boom, "an error ends the loop, for the supervisor")

	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() {
		done <- passEvery(ctx2, h, time.Second, func(time.Time) (bool, error) { passes <- clock.Now(); return false, nil })
	}()
	<-passes
	cancel2()
	assert.NoError(t, <-done, "the end of ctx is not an error")
}

// The wait between passes is the interval less the draw's tenth of it: in
// (0.9, 1] intervals, never longer than one.
func TestPassWaitIsJittered(t *testing.T) {
	assert.Equal(t, time.Second, passWait(time.Second, 0))
	assert.Equal(t, 950*time.Millisecond, passWait(time.Second, 0.5))
	assert.Greater(t, passWait(time.Second, 0.999999), 900*time.Millisecond)

	clock := clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	h := ServiceHost{Clock: clock, draw: func() float64 { return 0.5 }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	passes := make(chan time.Time, 10)
	go func() {
		_ = passEvery(ctx, h, time.Second, func(now time.Time) (bool, error) { passes <- now; return false, nil })
	}()
	start := <-passes
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	clock.Advance(949 * time.Millisecond)
	select {
	case p := <-passes:
		t.Fatalf("a pass at %v, before the wait of 950 ms ended", p.Sub(start))
	default:
	}
	clock.Advance(time.Millisecond)
	assert.Equal(t, start.Add(950*time.Millisecond), <-passes)
}

// A pass service's lease lasts ten of its intervals, from 10 s to a minute.
func TestPassLeaseTTL(t *testing.T) {
	for interval, want := range map[time.Duration]time.Duration{
		time.Millisecond: 10 * time.Second, time.Second: 10 * time.Second, 3 * time.Second: 30 * time.Second,
		30 * time.Second: time.Minute, time.Hour: time.Minute,
	} {
		assert.Equal(t, want, passLeaseTTL(interval), "interval %s", interval)
	}
}
