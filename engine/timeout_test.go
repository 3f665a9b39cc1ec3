package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// overruns counts spi.TimeoutMetrics' overruns.
type overruns struct {
	spi.NoOpMetrics
	n atomic.Int32
}

func (o *overruns) RunOverran(context.Context, uuid.UUID, string, time.Duration) { o.n.Add(1) }

// timeoutRig is an engine of one slot on a fake clock, with task.
func timeoutRig(t *testing.T, o engine.Options, tasks ...ratchet.Definition) (*engine.Engine, *clockwork.FakeClock, *overruns, <-chan engine.Event) {
	t.Helper()
	clock := clockwork.NewFakeClockAt(t0)
	m := &overruns{}
	o.NodeID, o.Concurrency = "n1", 1
	o.Client = ratchet.ClientOptions{Clock: clock, Logger: quiet, Metrics: m}
	eng, err := engine.New(memory.New(), o, tasks...)
	require.NoError(t, err)
	events, unsub := eng.Subscribe(100)
	require.NoError(t, eng.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = eng.Stop(ctx)
		unsub()
	})
	return eng, clock, m, events
}

// nextOf waits for the next event of job id.
func nextOf(t *testing.T, events <-chan engine.Event, id uuid.UUID) engine.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.JobID == id && ev.Kind != engine.EventStarted {
				return ev
			}
		case <-timeout:
			t.Fatalf("no event for job %s within 10 s", id)
		}
	}
}

// A body that waits on its context: at its 200 ms timeout the run fails
// (retried) with an error wrapping ErrTimeout, the body's context ends
// with ErrTimeout as its cause and a deadline 200 ms after the start, and
// its slot is free for the next job.
func TestRunTimeoutEndsARunThatWaitsOnItsContext(t *testing.T) {
	started, causes := make(chan time.Time, 2), make(chan error, 2)
	task := ratchet.NewVoidTask("wait", func(ctx context.Context, _ int) error {
		d, _ := ctx.Deadline()
		started <- d
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}, ratchet.WithTimeout(200*time.Millisecond), ratchet.WithBackoff(ratchet.BackoffFixed, time.Hour))
	eng, clock, m, events := timeoutRig(t, engine.Options{}, task)
	ctx := context.Background()
	id, err := task.Submit(ctx, eng.Client(), 1)
	require.NoError(t, err)
	eng.NotifyNewWork(ratchet.PriorityNormal)
	deadline := <-started
	assert.Equal(t, t0.Add(200*time.Millisecond), deadline, "the body's context carries the run's deadline")

	clock.Advance(200 * time.Millisecond)
	ev := nextOf(t, events, id)
	assert.Equal(t, engine.EventRetrying, ev.Kind)
	assert.Contains(t, ev.Error, "ratchet: run timed out after 200ms")
	assert.ErrorIs(t, <-causes, ratchet.ErrTimeout, "the body's context ends with ErrTimeout")
	j, err := eng.Client().GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusPending, j.Status)
	assert.Equal(t, 1, j.Attempts)
	assert.Contains(t, j.LastError, "run timed out after 200ms")

	// The one slot is free: the next job starts.
	next, err := task.Submit(ctx, eng.Client(), 2, ratchet.WithTimeout(0))
	require.NoError(t, err)
	eng.NotifyNewWork(ratchet.PriorityNormal)
	<-started
	assert.Zero(t, m.n.Load(), "no overrun: the body returned at its timeout")
	require.NoError(t, eng.Client().CancelJob(ctx, next))
}

// A body that ignores its context: its run fails at the timeout all the
// same, the body keeps its slot until it returns, its late return
// changes neither status nor attempts, and the overrun is counted.
func TestRunTimeoutOfABodyThatIgnoresItsContext(t *testing.T) {
	release, returned := make(chan struct{}), make(chan struct{}, 1)
	started := make(chan int, 2)
	task := ratchet.NewVoidTask("stubborn", func(ctx context.Context, n int) error {
		started <- n
		if n == 1 {
			<-release // ignores ctx, as time.Sleep(2 * time.Second) would
			returned <- struct{}{}
			return errors.New("returned late")
		}
		return nil
	})
	eng, clock, m, events := timeoutRig(t, engine.Options{RunTimeout: 200 * time.Millisecond}, task)
	ctx := context.Background()
	id, err := task.Submit(ctx, eng.Client(), 1, ratchet.WithTimeoutNotRetried())
	require.NoError(t, err)
	eng.NotifyNewWork(ratchet.PriorityNormal)
	require.Equal(t, 1, <-started)

	clock.Advance(200 * time.Millisecond)
	ev := nextOf(t, events, id)
	assert.Equal(t, engine.EventFailed, ev.Kind, "a final timeout is not retried")
	assert.Contains(t, ev.Error, "run timed out after 200ms")
	timedOut, err := eng.Client().GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusFailed, timedOut.Status)

	// The slot is still taken: a new job does not start.
	second, err := task.Submit(ctx, eng.Client(), 2)
	require.NoError(t, err)
	eng.NotifyNewWork(ratchet.PriorityNormal)
	select {
	case n := <-started:
		t.Fatalf("job %d started while the overrunning body held the only slot", n)
	default:
	}

	clock.Advance(1800 * time.Millisecond)
	close(release)
	<-returned
	require.Equal(t, 2, <-started, "the slot frees when the body returns")
	assert.Equal(t, engine.EventSucceeded, nextOf(t, events, second).Kind)
	j, err := eng.Client().GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, timedOut.Status, j.Status, "the late return changed nothing")
	assert.Equal(t, timedOut.Attempts, j.Attempts)
	assert.Equal(t, timedOut.LastError, j.LastError)
	assert.Equal(t, int32(1), m.n.Load(), "one overrun counted")
}
