package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// overruns counts spi.TimeoutMetrics' overruns.
type overruns struct {
	spi.NoOpMetrics
	n atomic.Int32
}

func (o *overruns) RunOverran(context.Context, uuid.UUID, string, time.Duration) { o.n.Add(1) }

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
	m := &overruns{}
	r := start(t, engine.Options{Concurrency: 1, Client: ratchet.ClientOptions{Metrics: m}}, task)
	ctx := context.Background()
	id, err := task.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	deadline := <-started
	assert.Equal(t, t0.Add(200*time.Millisecond), deadline, "the body's context carries the run's deadline")

	r.clock.Advance(200 * time.Millisecond)
	ev := r.next(id)
	assert.Equal(t, engine.EventRetrying, ev.Kind)
	assert.Contains(t, ev.Error, "ratchet: run timed out after 200ms")
	assert.ErrorIs(t, <-causes, ratchet.ErrTimeout, "the body's context ends with ErrTimeout")
	j := r.job(id)
	assert.Equal(t, spi.StatusPending, j.Status)
	assert.Equal(t, 1, j.Attempts)
	assert.Contains(t, j.LastError, "run timed out after 200ms")

	// The one slot is free: the next job starts.
	next, err := task.Submit(ctx, r.client, 2, ratchet.WithTimeout(0))
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	<-started
	assert.Zero(t, m.n.Load(), "no overrun: the body returned at its timeout")
	require.NoError(t, r.client.CancelJob(ctx, next))
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
	m := &overruns{}
	r := start(t, engine.Options{Concurrency: 1, RunTimeout: 200 * time.Millisecond, Client: ratchet.ClientOptions{Metrics: m}}, task)
	ctx := context.Background()
	id, err := task.Submit(ctx, r.client, 1, ratchet.WithTimeoutNotRetried())
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	require.Equal(t, 1, <-started)

	r.clock.Advance(200 * time.Millisecond)
	ev := r.next(id)
	assert.Equal(t, engine.EventFailed, ev.Kind, "a final timeout is not retried")
	assert.Contains(t, ev.Error, "run timed out after 200ms")
	timedOut := r.job(id)
	assert.Equal(t, spi.StatusFailed, timedOut.Status)

	// The slot is still taken: a new job does not start.
	second, err := task.Submit(ctx, r.client, 2)
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	select {
	case n := <-started:
		t.Fatalf("job %d started while the overrunning body held the only slot", n)
	default:
	}

	r.clock.Advance(1800 * time.Millisecond)
	close(release)
	<-returned
	require.Equal(t, 2, <-started, "the slot frees when the body returns")
	assert.Equal(t, engine.EventSucceeded, r.next(second).Kind)
	j := r.job(id)
	assert.Equal(t, timedOut.Status, j.Status, "the late return changed nothing")
	assert.Equal(t, timedOut.Attempts, j.Attempts)
	assert.Equal(t, timedOut.LastError, j.LastError)
	assert.Equal(t, int32(1), m.n.Load(), "one overrun counted")
}
