package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// A job with a start-by deadline 1 s away, behind a backlog that holds
// the only slot for 5 s, never runs: claimed at 5 s, it ends FAILED with
// ErrExpired, one attempt charged and its three retries unspent. A job
// claimed before its deadline runs. (The sweeper, which would fail the job
// at its deadline, passes once an hour here: the claim decides.)
func TestStartByBehindABacklog(t *testing.T) {
	release, busyNow := make(chan struct{}), make(chan struct{})
	var ran atomic.Int32
	backlog := ratchet.NewVoidTask("backlog", func(ctx context.Context, _ int) error {
		close(busyNow)
		<-release
		return nil
	})
	remind := ratchet.NewVoidTask("remind", func(ctx context.Context, _ int) error {
		ran.Add(1)
		return nil
	}, ratchet.WithMaxRetries(3))
	r := start(t, engine.Options{Concurrency: 1, StartBySweepInterval: time.Hour}, backlog, remind)
	ctx := context.Background()

	busy, err := backlog.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	<-busyNow
	late, err := remind.Submit(ctx, r.client, 1, ratchet.WithStartBy(t0.Add(time.Second)))
	require.NoError(t, err)

	r.clock.Advance(5 * time.Second) // the backlog's five seconds
	close(release)
	require.Equal(t, engine.EventSucceeded, r.next(busy).Kind)
	ev := r.next(late)
	require.Equal(t, engine.EventFailed, ev.Kind)
	assert.Contains(t, ev.Error, "ratchet: start-by deadline passed: not started by 2030-01-01T00:00:01Z")
	j := r.job(late)
	assert.Equal(t, spi.StatusFailed, j.Status)
	// Decided by the claim (its run's attempt charged), or, when the
	// sweeper's first pass (at its start, on a goroutine) comes after the
	// clock's jump, by the sweeper (none charged): either way not retried,
	// whatever retries are left.
	assert.LessOrEqual(t, j.Attempts, 1, "not retried, whatever retries are left")
	assert.Zero(t, ran.Load(), "the body never ran")

	inTime, err := remind.Submit(ctx, r.client, 2, ratchet.WithStartBy(t0.Add(time.Minute)))
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	require.Equal(t, engine.EventSucceeded, r.next(inTime).Kind)
	assert.Equal(t, int32(1), ran.Load())
}

// A start-within window as a task's default: each run must start within
// a second of the job being due. One due now behind a 5 s backlog never
// runs; one due 10 s later and claimed then runs.
func TestStartWithinAsATaskDefault(t *testing.T) {
	release, busyNow := make(chan struct{}), make(chan struct{})
	backlog := ratchet.NewVoidTask("backlog", func(ctx context.Context, _ int) error {
		close(busyNow)
		<-release
		return nil
	})
	var ran atomic.Int32
	quote := ratchet.NewVoidTask("quote", func(context.Context, int) error {
		ran.Add(1)
		return nil
	}, ratchet.WithStartWithin(time.Second))
	r := start(t, engine.Options{Concurrency: 1}, backlog, quote)
	ctx := context.Background()
	busy, err := backlog.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	<-busyNow
	stale, err := quote.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	later, err := quote.Submit(ctx, r.client, 2, ratchet.WithDelay(5*time.Second))
	require.NoError(t, err)

	r.clock.Advance(5 * time.Second)
	close(release)
	require.Equal(t, engine.EventSucceeded, r.next(busy).Kind)
	ev := r.next(stale)
	require.Equal(t, engine.EventFailed, ev.Kind)
	assert.Contains(t, ev.Error, "ratchet: start-by deadline passed: not started by 2030-01-01T00:00:01Z")
	require.Equal(t, engine.EventSucceeded, r.next(later).Kind, "due at 5 s and claimed then: within its window")
	assert.Equal(t, int32(1), ran.Load())

	_, err = quote.Submit(ctx, r.client, 3, ratchet.WithStartWithin(0))
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

// A start-by deadline that could never be met is refused at submission,
// with nothing written.
func TestStartByRefusedWhenUnreachable(t *testing.T) {
	task := ratchet.NewVoidTask("remind", func(context.Context, int) error { return nil })
	r := start(t, engine.Options{}, task)
	ctx := context.Background()
	for name, opts := range map[string][]ratchet.SubmitOption{
		"zero time":             {ratchet.WithStartBy(time.Time{})},
		"before a delay":        {ratchet.WithDelay(time.Minute), ratchet.WithStartBy(t0.Add(30 * time.Second))},
		"before an At":          {ratchet.At(t0.Add(time.Hour)), ratchet.WithStartBy(t0.Add(time.Minute))},
		"before the submission": {ratchet.WithStartBy(t0.Add(-time.Second))},
	} {
		_, err := task.Submit(ctx, r.client, 1, opts...)
		assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, name)
	}
	_, err := task.Submit(ctx, r.client, 1, ratchet.WithDelay(time.Minute), ratchet.WithStartBy(t0.Add(time.Minute)))
	assert.NoError(t, err, "a deadline at the due time itself is allowed")
	n, _, err := r.client.CountJobs(ctx, ratchet.ListOptions{}, 100)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "only the valid submission was written")
}

// A job that no node claims (its task paused) fails at its start-by
// deadline, by the sweeper: FAILED with ErrExpired, no attempt spent, its
// body never run, and WaitJob returns it.
func TestStartBySweep(t *testing.T) {
	var ran atomic.Int32
	remind := ratchet.NewVoidTask("remind", func(ctx context.Context, _ int) error {
		ran.Add(1)
		return nil
	}, ratchet.WithMaxRetries(3))
	r := start(t, engine.Options{StartBySweepInterval: 100 * time.Millisecond}, remind)
	ctx := context.Background()
	require.NoError(t, r.client.PauseTask(ctx, "remind"))
	id, err := remind.Submit(ctx, r.client, 1, ratchet.WithStartBy(t0.Add(time.Second)))
	require.NoError(t, err)
	by, _, err := r.store.GetProperty(ctx, id, spi.StartByProperty)
	require.NoError(t, err)
	assert.Equal(t, spi.FormatStartBy(t0.Add(time.Second)), by, "the deadline the sweeper reads")

	done := make(chan *ratchet.Job, 1)
	go func() {
		j, _ := r.client.WaitJob(ctx, id)
		done <- j
	}()
	for range 12 {
		r.clock.Advance(100 * time.Millisecond)
	}
	ev := r.next(id)
	require.Equal(t, engine.EventFailed, ev.Kind)
	assert.Contains(t, ev.Error, "ratchet: start-by deadline passed: not started by 2030-01-01T00:00:01Z (found unstarted at 2030-01-01T00:00:01.")
	j := <-done
	require.NotNil(t, j, "WaitJob returns the expired job")
	assert.Equal(t, spi.StatusFailed, j.Status)
	assert.Zero(t, j.Attempts, "no run, no attempt")
	require.NoError(t, r.client.ResumeTask(ctx, "remind"))
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	assert.Zero(t, ran.Load(), "the body never ran")
}
